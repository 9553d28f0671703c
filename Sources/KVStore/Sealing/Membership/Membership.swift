import Crypto
import Foundation

/// One device's membership of a sealed store: the roster version it trusts
/// (pinned in its state directory as `roster.pin`), its keys (`device.key`),
/// and what it does with them: load the `SealingKeys` the journal seals
/// and opens records with, seal a store, pair and join a device, revoke one,
/// recover with the recovery key (docs/sealed.md).
///
/// A device trusts only the versions that follow its pin, each signed by a
/// member of the version before: a writer of the sync directory with no
/// member's key can delete or hold back roster versions, but never add a
/// device, change a key, or take a device back to an older version.
public struct Membership: Sendable {
    let syncPath: String
    let statePath: String

    /// The pinned version's file in the state directory.
    static let pinName = "roster.pin"

    /// The membership of the device whose state directory is `stateDirectory` in the store at `syncDirectory`.
    public init(syncDirectory: URL, stateDirectory: URL) {
        syncPath = syncDirectory.path
        statePath = stateDirectory.path
    }

    /// Whether the store at `syncDirectory` is sealed: its `roster/` holds a version.
    public static func isSealed(syncDirectory: URL) -> Bool {
        guard let roster = try? RosterFolder(syncPath: syncDirectory.path) else { return false }
        return !roster.names().isEmpty
    }

    // MARK: The state directory

    func stateFolder(create: Bool = false) throws(MembershipError) -> Folder {
        let folder: Folder?
        do { folder = try Folder.open(statePath, create: create) } catch { throw MembershipError(error) }
        guard let folder else { throw MembershipError("\(statePath) does not exist: this device has never opened the store") }
        return folder
    }

    /// Whether this device has pinned a roster version (`roster.pin`), readable or not: it was a member.
    var hasPinnedVersion: Bool { ((try? Folder.open(statePath)) ?? nil)?.entry(Self.pinName) != nil }

    /// Whether the store is sealed as this device sees it: its `roster/` holds a version, or this device
    /// pinned one (a roster deleted from the folder leaves the store sealed for its members).
    var storeIsSealed: Bool { Self.isSealed(syncDirectory: URL(fileURLWithPath: syncPath)) || hasPinnedVersion }

    /// The version this device trusts, or nil when it has none (it is no member).
    func pinned() throws(MembershipError) -> RosterVersion? { try pinnedWithParent()?.version }

    /// The version this device trusts and the one before it, when known (`roster.pin`: the
    /// version's bytes, then the parent's, each after a 4-byte length; the parent's length 0 when unknown).
    func pinnedWithParent() throws(MembershipError) -> (version: RosterVersion, parent: RosterVersion?)? {
        let bytes: [UInt8]?
        do { bytes = try Folder.open(statePath)?.read(Self.pinName, limit: 2 * (RosterVersion.Limits.bytes + 4)) } catch {
            throw MembershipError(error)
        }
        guard let bytes else { return nil }
        let pinned = bytes.withUnsafeBytes { buffer -> (RosterVersion, RosterVersion?)? in
            var reader = ByteReader(buffer)
            guard let version = reader.blob().flatMap({ RosterVersion.decode(Array($0)) }), let parentBytes = reader.blob(),
                  reader.isAtEnd else { return nil }
            if parentBytes.isEmpty { return (version, nil) }
            guard let parent = RosterVersion.decode(Array(parentBytes)) else { return nil }
            return (version, parent)
        }
        guard let pinned else {
            throw MembershipError("\(statePath)/\(Self.pinName) is not a pinned roster version: this device must join the store again (kvfs join)")
        }
        return pinned
    }

    func pin(_ version: RosterVersion, parent: RosterVersion? = nil) throws(MembershipError) {
        var writer = ByteWriter()
        writer.blob(version.bytes)
        writer.blob(parent?.bytes ?? [])
        let folder = try stateFolder(create: true)
        do { try folder.writeAtomically(Self.pinName, writer.bytes) } catch { throw MembershipError(error) }
    }

    func deviceID() throws(MembershipError) -> DeviceID {
        // The state directory is made first: a machine joining from a fresh one keeps the id it joins with.
        _ = try stateFolder(create: true)
        do { return try StateDirectory(path: statePath).deviceID() } catch { throw MembershipError(error) }
    }

    func storeID() throws(MembershipError) -> String {
        guard let id = SyncDirectory(path: syncPath).storeID() else {
            throw MembershipError("\(syncPath) holds no store id yet: open the store once (kvfs ls), or wait for its folder to arrive")
        }
        return id
    }

    // MARK: The roster's head

    /// The version this device trusts now: its pin, moved on along the
    /// versions that follow it in `roster/` (and pinned there), with the files
    /// that were refused on the way.
    func refresh() throws(MembershipError) -> (version: RosterVersion, refused: [RosterRefusal]) {
        let (version, refused, _) = try refreshNotingFork()
        return (version, refused)
    }

    /// ``refresh()``, with the fork that stops the roster, if one does (``RosterFork``): it is among the refusals too.
    func refreshNotingFork() throws(MembershipError) -> (version: RosterVersion, refused: [RosterRefusal], fork: RosterFork?) {
        guard let (pinned, parent) = try pinnedWithParent() else {
            throw MembershipError(Self.isSealed(syncDirectory: URL(fileURLWithPath: syncPath))
                ? "this device is not a member of the sealed store at \(syncPath): pair it (kvfs pair on a member, kvfs join here)"
                : "the store at \(syncPath) is not sealed")
        }
        let (head, before, refused, fork) = try RosterFolder(syncPath: syncPath).head(after: pinned, parent: parent)
        if head != pinned { try pin(head, parent: before) }
        return (head, refused + (fork.map { [$0.refusal] } ?? []), fork)
    }

    /// The keys this device (`device`, when the caller knows its id) seals and opens records with, from
    /// the roster version it trusts now; refused when it is not (or no longer) a member. What the journal's
    /// `StoreSealing` is made from, and made again when `roster/` changes.
    func keys(device: DeviceID? = nil) throws(MembershipError) -> SealingKeys {
        try keysAndRefusals(device: device).keys
    }

    /// ``keys(device:)``, with the roster's files refused on the way to the version it trusts (for the status and the log).
    func keysAndRefusals(device: DeviceID? = nil) throws(MembershipError) -> (keys: SealingKeys, refused: [RosterRefusal]) {
        let (version, refused) = try refresh()
        let id: DeviceID
        if let device { id = device } else { id = try deviceID() }
        let ancestors = (try? RosterFolder(syncPath: syncPath))?.ancestors(of: version) ?? []
        return (try Self.keys(of: version, device: id, keys: deviceKeys(), ancestors: ancestors), refused)
    }

    func deviceKeys() throws(MembershipError) -> DeviceKeys {
        guard let keys = try DeviceKeys.load(from: stateFolder()) else {
            throw MembershipError("\(statePath) has no \(DeviceKeys.fileName): this device is no member of a sealed store")
        }
        return keys
    }

    /// `device`'s view of `version`: its store keys (the current epoch's
    /// unwrapped with its agreement key, the earlier ones opened with it), and
    /// the device members' verifying keys; with the versions before it
    /// (`ancestors`), who was revoked since each earlier epoch and holds its key.
    static func keys(of version: RosterVersion, device: DeviceID, keys: DeviceKeys,
                     ancestors: [RosterVersion] = []) throws(MembershipError) -> SealingKeys {
        guard let member = version.member(device), member.role == .device, member.signingKey == keys.signingPublicKey else {
            throw MembershipError("this device (\(device)) is not a member of the sealed store in roster version \(version.number): it was revoked, or must be paired (kvfs join)")
        }
        let (current, earlier) = try storeKeys(of: version, member: member, agreement: keys.agreement)
        var storeKeys: [UInt32: SymmetricKey] = [version.epoch: current]
        for (index, key) in earlier.enumerated() { storeKeys[UInt32(index + 1)] = key }
        var members: [DeviceID: Curve25519.Signing.PublicKey] = [:]
        for member in version.deviceMembers { members[member.id] = member.verifyingKey }
        return SealingKeys(storeID: version.storeID, currentEpoch: version.epoch, storeKeys: storeKeys, device: device,
                           signingKey: keys.signing, members: members,
                           memberNames: Dictionary(version.deviceMembers.map { ($0.id, $0.name) }) { first, _ in first },
                           rosterVersion: version.number, hasRecoveryKey: version.recoveryMember != nil,
                           revokedReaders: revokedReaders(of: version, ancestors: ancestors))
    }

    /// For each epoch before `version`'s, the names of the devices that held its key (members of a version
    /// of that epoch or a later one: each gets the earlier keys) and are no members of `version`.
    static func revokedReaders(of version: RosterVersion, ancestors: [RosterVersion]) -> [UInt32: [String]] {
        let current = Set(version.deviceMembers.map(\.id))
        var readers: [UInt32: [String]] = [:]
        for epoch in UInt32(1)..<max(version.epoch, 1) {
            var seen: Set<DeviceID> = []
            for earlier in ancestors where earlier.epoch >= epoch {
                for member in earlier.deviceMembers where !current.contains(member.id) && seen.insert(member.id).inserted {
                    readers[epoch, default: []].append(member.name)
                }
            }
        }
        return readers
    }

    /// The current epoch's key, unwrapped by `member`, and the earlier epochs' keys opened with it.
    static func storeKeys(of version: RosterVersion, member: RosterMember,
                          agreement: Curve25519.KeyAgreement.PrivateKey) throws(MembershipError) -> (SymmetricKey, [SymmetricKey]) {
        let context = WrapContext(storeID: version.storeID, epoch: version.epoch, member: member.id)
        guard let current = KeyWrap.unwrap(member.wrappedKey, with: agreement, context: context) else {
            throw MembershipError("the store key wrapped for \(member.name) in roster version \(version.number) does not open with its key")
        }
        guard let earlier = KeyWrap.openEarlier(version.earlier, count: Int(version.epoch - 1), under: current, storeID: version.storeID) else {
            throw MembershipError("the earlier epochs' keys in roster version \(version.number) do not open")
        }
        return (current, earlier)
    }

    // MARK: Changing the roster

    /// A member that holds `key` for `epoch` in `storeID`: the store key wrapped for its agreement key.
    static func member(_ role: RosterMember.Role, id: DeviceID, name: String, signingKey: [UInt8], agreementKey: [UInt8],
                       key: SymmetricKey, epoch: UInt32, storeID: String) throws(MembershipError) -> RosterMember {
        let wrapped = try KeyWrap.wrap(key, for: agreementKey, context: WrapContext(storeID: storeID, epoch: epoch, member: id))
        return RosterMember(role: role, id: id, name: RosterVersion.clipped(name),
                            signingKey: signingKey, agreementKey: agreementKey, wrappedKey: wrapped)
    }

    /// Writes the version after `head` that `change` makes of its members, signed by `signer` with `signingKey`:
    /// the same epoch (the current key wrapped for whoever is added) or, with `newEpoch`, a fresh key
    /// wrapped for every member left. Pins it and returns it.
    @discardableResult
    func write(after head: RosterVersion, members: [RosterMember], newEpoch: (current: SymmetricKey, earlier: [SymmetricKey])?,
               signer: DeviceID, signingKey: Curve25519.Signing.PrivateKey) throws(MembershipError) -> RosterVersion {
        guard members.count <= RosterVersion.Limits.members else {
            throw MembershipError("a sealed store has at most \(RosterVersion.Limits.members) members")
        }
        var epoch = head.epoch
        var earlier = head.earlier
        var rewrapped = members
        if let newEpoch {
            guard head.epoch < RosterVersion.Limits.epochs else {
                throw MembershipError("the store has had \(RosterVersion.Limits.epochs) epochs, the most a roster holds: seal a new store")
            }
            epoch += 1
            earlier = try KeyWrap.sealEarlier(newEpoch.earlier, under: newEpoch.current, storeID: head.storeID)
            rewrapped = []
            for member in members {
                rewrapped.append(try Self.member(member.role, id: member.id, name: member.name, signingKey: member.signingKey,
                                                 agreementKey: member.agreementKey, key: newEpoch.current, epoch: epoch,
                                                 storeID: head.storeID))
            }
        }
        let version = try RosterVersion.signed(storeID: head.storeID, number: head.number + 1, previous: head.hash, epoch: epoch,
                                               members: rewrapped, earlier: earlier, signer: signer, signingKey: signingKey)
        try RosterFolder.write(version, syncPath: syncPath)
        try pin(version, parent: head)
        return version
    }

    /// This device's roster head and what it needs to change the roster: its member entry there and its keys.
    /// Refused while the roster has a fork, which only ``revoke(_:)`` (by a member the fork's versions all keep)
    /// or the recovery key settles.
    func asMember() throws(MembershipError) -> (head: RosterVersion, me: RosterMember, keys: DeviceKeys) {
        let (head, me, keys, fork) = try asMemberNotingFork()
        if let fork { throw MembershipError("\(fork)") }
        return (head, me, keys)
    }

    /// ``asMember()``, with the roster's fork, if it has one.
    func asMemberNotingFork() throws(MembershipError) -> (head: RosterVersion, me: RosterMember, keys: DeviceKeys, fork: RosterFork?) {
        let (head, _, fork) = try refreshNotingFork()
        let device = try deviceID()
        let keys = try deviceKeys()
        guard let me = head.member(device), me.role == .device, me.signingKey == keys.signingPublicKey else {
            throw MembershipError("this device is not a member of the sealed store: only a member can change its roster")
        }
        return (head, me, keys, fork)
    }
}
