import Foundation

/// The roster's folder in the sync directory, `roster/`: one file per
/// version, `version-<number, 16 hex digits>-<signer's id>`, each written once
/// by its signer alone (so no synchronizer ever sees two writers of one file;
/// two members' concurrent versions are two files), never changed
/// (docs/sealed.md § Roster).
///
/// Whoever can write the sync directory can put anything here: the folder
/// is only a source of candidates, and a version counts only when it follows
/// the version a device trusts (``RosterVersion/refusal(after:)``).
struct RosterFolder {
    static let name = "roster"
    let folder: Folder?

    /// `roster/` of the sync directory at `syncPath`, or a folder with nothing in it when there is none.
    init(syncPath: String, create: Bool = false) throws(MembershipError) {
        do {
            folder = try SyncDirectory(path: syncPath).rootFolder(create: create)?.folder(Self.name, create: create)
        } catch {
            throw MembershipError(error)
        }
    }

    static func fileName(number: UInt64, signer: DeviceID) -> String {
        "version-" + String(number, radix: 16).leftPadded(to: 16) + "-" + signer.hex
    }

    /// The number and signer a file's name says, or nil when it is no version's name (foreign files are ignored).
    static func parse(_ name: String) -> (number: UInt64, signer: DeviceID)? {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "version", parts[1].utf8.count == 16,
              parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let number = UInt64(parts[1], radix: 16), let signer = DeviceID(hex: String(parts[2])) else { return nil }
        return (number, signer)
    }

    /// The versions' file names, by the number they claim.
    func names() -> [UInt64: [String]] {
        var byNumber: [UInt64: [String]] = [:]
        for name in folder?.names() ?? [] {
            if let (number, _) = Self.parse(name) { byNumber[number, default: []].append(name) }
        }
        return byNumber
    }

    /// The version in file `name`, or why it is none: unreadable, too big, not a version, or not what its name says.
    func version(named name: String) -> Result<RosterVersion, RosterRefusal> {
        guard let (number, signer) = Self.parse(name) else { return .failure(RosterRefusal(file: name, reason: "not a version's name")) }
        let bytes: [UInt8]?
        do { bytes = try folder?.read(name, limit: RosterVersion.Limits.bytes + 1) } catch {
            return .failure(RosterRefusal(file: name, reason: "\(error)"))
        }
        guard let bytes else { return .failure(RosterRefusal(file: name, reason: "it has gone")) }
        guard let version = RosterVersion.decode(bytes) else { return .failure(RosterRefusal(file: name, reason: "it is not a roster version")) }
        guard version.number == number, version.signer == signer else {
            return .failure(RosterRefusal(file: name, reason: "its name does not say its number and signer (moved or replayed)"))
        }
        return .success(version)
    }

    /// Writes `version` under its name.
    static func write(_ version: RosterVersion, syncPath: String) throws(MembershipError) {
        guard let folder = try RosterFolder(syncPath: syncPath, create: true).folder else { throw MembershipError("cannot create \(syncPath)/\(name)") }
        do { try folder.writeAtomically(fileName(number: version.number, signer: version.signer), version.bytes) } catch {
            throw MembershipError(error)
        }
    }

    /// The newest version that follows `pinned` through the files here, one
    /// number at a time, with the version before it; the files that claimed
    /// a next number and were refused; and the fork that stopped it, if one did.
    ///
    /// Two members may change the roster at once: two versions with one number,
    /// each following the same version. Every device takes the same one
    /// (``choose(_:)``), the pinned one's siblings included when `parent`
    /// (the version before it) is known, so a device that pinned the loser moves
    /// to the winner. Versions that each remove another's signer are a fork:
    /// none is taken (a device that pinned one goes back to their parent) until
    /// a version after one of them settles it (``settles(_:after:)``).
    func head(after pinned: RosterVersion, parent: RosterVersion? = nil)
        -> (head: RosterVersion, parent: RosterVersion?, refused: [RosterRefusal], fork: RosterFork?) {
        let byNumber = names()
        var refused: [RosterRefusal] = []
        var (head, before) = (pinned, parent)
        var fork: RosterFork?
        if let parent {
            let (siblings, _) = following(parent, names: byNumber[pinned.number] ?? [])
            switch step(among: siblings.filter { $0.hash != pinned.hash } + [pinned], byNumber: byNumber) {
            case let .to(version, branch): (head, before) = (version, branch ?? parent)
            case let .fork(found): (head, before, fork) = (parent, nil, found)
            }
        }
        while fork == nil, let names = byNumber[head.number + 1] {
            let (accepted, refusals) = following(head, names: names)
            refused += refusals
            guard !accepted.isEmpty else { break }
            switch step(among: accepted, byNumber: byNumber) {
            case let .to(version, branch): (head, before) = (version, branch ?? head)
            case let .fork(found): fork = found
            }
        }
        return (head, before, refused, fork)
    }

    /// The versions before `head`, newest first, as far back as the files here go: each the one whose hash
    /// the next names as its previous (a hash chain down from a version this device trusts, so nothing a
    /// writer of the folder plants is among them).
    func ancestors(of head: RosterVersion) -> [RosterVersion] {
        var byNumber = names()
        var chain: [RosterVersion] = []
        var current = head
        while current.number > 0, let names = byNumber.removeValue(forKey: current.number - 1) {
            guard let previous = names.lazy.compactMap({ try? version(named: $0).get() }).first(where: { $0.hash == current.previous })
            else { break }
            chain.append(previous)
            current = previous
        }
        return chain
    }

    /// The versions among the files `names` that may follow `version`, and the refusals of the others.
    private func following(_ version: RosterVersion, names: [String]) -> ([RosterVersion], [RosterRefusal]) {
        var accepted: [RosterVersion] = []
        var refused: [RosterRefusal] = []
        for name in names.sorted() {
            switch self.version(named: name) {
            case let .success(candidate):
                if let reason = candidate.refusal(after: version) {
                    refused.append(RosterRefusal(file: name, reason: reason))
                } else {
                    accepted.append(candidate)
                }
            case let .failure(refusal): refused.append(refusal)
            }
        }
        return (accepted, refused)
    }

    /// Where versions with one number that follow one version lead: to the one chosen, or, when they fork,
    /// to the version that settles the fork and the branch it follows; or to the fork, unsettled.
    private enum Step {
        case to(RosterVersion, branch: RosterVersion?)
        case fork(RosterFork)
    }

    private func step(among candidates: [RosterVersion], byNumber: [UInt64: [String]]) -> Step {
        switch Self.choose(candidates) {
        case let .version(version): return .to(version, branch: nil)
        case let .fork(versions):
            let fork = RosterFork(versions: versions)
            let settlements = versions.flatMap { branch in
                following(branch, names: byNumber[branch.number + 1] ?? []).0.filter { fork.canBeSettled(by: $0.signer, after: branch) }
                    .map { (branch, $0) }
            }
            guard let (branch, settler) = settlements.min(by: { $0.1.signer < $1.1.signer }) else { return .fork(fork) }
            return .to(settler, branch: branch)
        }
    }

    /// What every device takes of versions with one number that follow one version.
    enum Choice: Equatable {
        case version(RosterVersion)
        case fork([RosterVersion])
    }

    /// Of versions with one number that follow one version, the one every device takes: the versions whose
    /// signer another one removes lose (so a device being revoked cannot undo its revocation with a version
    /// of its own); of those left, the one whose signer's id is the smallest, which no signer can choose
    /// anew for the occasion (a version's bytes, and so its hash, it could make again and again until one
    /// won). When every one's signer is removed by another, they are a fork.
    static func choose(_ candidates: [RosterVersion]) -> Choice {
        let unremoved = candidates.filter { candidate in
            candidates.allSatisfy { other in other.bytes == candidate.bytes || other.member(candidate.signer) != nil }
        }
        guard let chosen = unremoved.min(by: { $0.signer < $1.signer }) else { return .fork(candidates.sorted { $0.signer < $1.signer }) }
        return .version(chosen)
    }
}

/// Roster versions with one number, following one version, each of which removes another's signer
/// (a revoked device's answer to its revocation): none is taken, every member's status names them, and
/// no roster change but the one that settles them is written.
struct RosterFork: Sendable, Equatable, CustomStringConvertible {
    let versions: [RosterVersion]

    var number: UInt64 { versions[0].number }

    /// Whether a version `signer` signs after `branch` (one of the fork's) settles the fork: the recovery key's,
    /// or a device member's that every version of the fork keeps.
    func canBeSettled(by signer: DeviceID, after branch: RosterVersion) -> Bool {
        if signer == branch.recoveryMember?.id { return true }
        return versions.allSatisfy { $0.member(signer)?.role == .device }
    }

    /// What the status and the log say of it, as a roster file refused.
    var refusal: RosterRefusal {
        RosterRefusal(file: RosterFolder.fileName(number: number, signer: versions[0].signer), reason: description)
    }

    var description: String {
        let each = versions.map { version in
            let removed = versions.filter { $0.signer != version.signer && version.member($0.signer) == nil }.map(\.signer.hex)
            return "\(RosterFolder.fileName(number: version.number, signer: version.signer)) removes \(removed.joined(separator: ", "))"
        }
        return "roster version \(number) forked: \(each.joined(separator: "; ")); neither is taken until the recovery key "
            + "(kvfs join --recovery-key) or a member both keep (kvfs retire --revoke on it) writes the version after one of them"
    }
}

/// A file of `roster/` that was not taken as a version, and why: what the status and the log say.
struct RosterRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    let file: String
    let reason: String
    var description: String { "roster/\(file): \(reason)" }
}

extension String {
    /// The string with zeros before it up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
