import Crypto
import Foundation

/// Pairing through the sync directory (docs/sealed.md § Pairing): the member
/// shows a one-time code; the new machine, given it, writes
/// `pairing/<name>.request` (its keys, MACed); the member checks the MAC,
/// writes a roster version that adds it, then `pairing/<name>.accept` (that
/// version's hash, MACed); the new machine checks the MAC, finds the version,
/// pins it and removes its request; the member then removes its accept.
///
/// A writer of the folder without the code cannot find the files' names, and
/// cannot write a message either side accepts: a request it forges is
/// refused (the pairing stops, nobody is added), and an accept or roster
/// version it forges is never pinned.
extension Membership {
    /// How often both sides look for the other's message.
    static let pairingPoll: Duration = .milliseconds(100)

    static func pairingFolder(syncPath: String, create: Bool = false) throws(MembershipError) -> Folder? {
        do { return try SyncDirectory(path: syncPath).rootFolder(create: create)?.folder("pairing", create: create) } catch {
            throw MembershipError(error)
        }
    }

    /// A new code for pairing a machine from this one, which must be a member.
    public func startPairing() throws(MembershipError) -> PairingCode {
        _ = try asMember()
        return PairingCode.random()
    }

    /// Waits (up to `timeout`) for the machine given `code` to ask to join, adds
    /// it to the roster, tells it which version, and waits for it to take it.
    /// Returns the new member's name and id.
    public func completePairing(_ code: PairingCode, timeout: Duration) throws(MembershipError) -> (name: String, id: String) {
        let deadline = ContinuousClock.now + timeout
        let requestName = code.name + ".request", acceptName = code.name + ".accept"
        let bytes = try Self.waitFor(requestName, syncPath: syncPath, until: deadline,
                                     what: "the new machine's request (run kvfs join there and type the code)")
        guard let request = PairingRequest.decode(bytes, code: code) else {
            throw MembershipError("pairing/\(requestName) is not a request made with this code: nobody was added; start again with a new code")
        }
        let (head, me, keys) = try asMember()
        guard request.storeID == head.storeID else { throw MembershipError("the new machine asked to join another store (\(request.storeID))") }
        if let original = head.deviceMembers.first(where: { $0.id != request.device && $0.signingKey == request.signingKey }) {
            // Two members with one key would sign as each other (docs/sealed.md § A copied state directory).
            throw MembershipError("the new machine holds the keys of member \(original.name) (\(original.id)): its state directory is a copy of that one's; nobody was added")
        }
        let version: RosterVersion
        if let already = head.member(request.device), already.signingKey == request.signingKey {
            version = head
        } else {
            guard head.member(request.device) == nil else {
                throw MembershipError("device \(request.device) is a member already, with other keys: revoke it first")
            }
            let (current, _) = try Self.storeKeys(of: head, member: me, agreement: keys.agreement)
            let joined = try Self.member(.device, id: request.device, name: request.name, signingKey: request.signingKey,
                                         agreementKey: request.agreementKey, key: current, epoch: head.epoch, storeID: head.storeID)
            version = try write(after: head, members: head.members + [joined], newEpoch: nil, signer: me.id, signingKey: keys.signing)
        }
        let accept = PairingAccept(storeID: head.storeID, device: request.device, number: version.number, hash: version.hash)
        guard let folder = try Self.pairingFolder(syncPath: syncPath, create: true) else { throw MembershipError("cannot create \(syncPath)/pairing") }
        do { try folder.writeAtomically(acceptName, accept.encoded(code: code)) } catch { throw MembershipError(error) }
        // The joiner removes its request once it has pinned the version; the accept is then of no more use.
        while ContinuousClock.now < deadline, folder.entry(requestName) != nil { Self.pause() }
        folder.remove(acceptName)
        return (request.name, request.device.hex)
    }

    /// Joins this device to the store with the code a member shows (`kvfs pair`
    /// there): writes its request, waits (up to `timeout`) for the member's
    /// accept, checks it and the roster version it names, and pins that version.
    /// Returns the version's number.
    @discardableResult
    public func join(code: PairingCode, deviceName: String, timeout: Duration) throws(MembershipError) -> UInt64 {
        let deadline = ContinuousClock.now + timeout
        let storeID = try storeID()
        let (device, keys) = try joiningIdentity()
        let request = PairingRequest(storeID: storeID, device: device, name: RosterVersion.clipped(deviceName),
                                     signingKey: keys.signingPublicKey, agreementKey: keys.agreementPublicKey)
        let requestName = code.name + ".request", acceptName = code.name + ".accept"
        guard let folder = try Self.pairingFolder(syncPath: syncPath, create: true) else { throw MembershipError("cannot create \(syncPath)/pairing") }
        do { try folder.writeAtomically(requestName, request.encoded(code: code)) } catch { throw MembershipError(error) }
        defer { folder.remove(requestName) }
        let bytes = try Self.waitFor(acceptName, syncPath: syncPath, until: deadline,
                                     what: "the member's answer (is kvfs pair still running there, with this code?)")
        guard let accept = PairingAccept.decode(bytes, code: code), accept.storeID == storeID, accept.device == device else {
            throw MembershipError("pairing/\(acceptName) is not an answer made with this code for this device: not joined")
        }
        let version = try Self.waitForVersion(accept, syncPath: syncPath, until: deadline)
        // Checks that it can open the keys before trusting the version.
        _ = try Self.keys(of: version, device: device, keys: keys)
        try pin(version, parent: Self.parent(of: version, syncPath: syncPath))
        return version.number
    }

    /// The bytes of `pairing/<name>` once a whole message is there (a synchronizer may deliver it late).
    static func waitFor(_ name: String, syncPath: String, until deadline: ContinuousClock.Instant, what: String) throws(MembershipError) -> [UInt8] {
        while true {
            if let folder = try pairingFolder(syncPath: syncPath),
               let bytes = try? folder.read(name, limit: PairingWire.limit + 1), !bytes.isEmpty {
                return bytes
            }
            guard ContinuousClock.now < deadline else { throw MembershipError("timed out waiting for \(what)") }
            pause()
        }
    }

    /// The roster version `accept` names, once it has arrived: the file of its number and hash.
    static func waitForVersion(_ accept: PairingAccept, syncPath: String, until deadline: ContinuousClock.Instant) throws(MembershipError) -> RosterVersion {
        while true {
            let roster = try RosterFolder(syncPath: syncPath)
            for name in roster.names()[accept.number] ?? [] {
                if case let .success(version) = roster.version(named: name), version.hash == accept.hash { return version }
            }
            guard ContinuousClock.now < deadline else {
                throw MembershipError("timed out waiting for roster version \(accept.number) to arrive in \(syncPath)/roster")
            }
            pause()
        }
    }

    /// The version `version` follows, when its file is here: kept with the pin, so that a concurrent change's
    /// winner replaces `version` (``RosterFolder/head(after:parent:)``).
    static func parent(of version: RosterVersion, syncPath: String) -> RosterVersion? {
        guard let roster = try? RosterFolder(syncPath: syncPath) else { return nil }
        return (roster.names()[version.number - 1] ?? []).lazy.compactMap { try? roster.version(named: $0).get() }
            .first { $0.hash == version.previous && version.refusal(after: $0) == nil }
    }

    static func pause() { Thread.sleep(forTimeInterval: 0.1) }
}
