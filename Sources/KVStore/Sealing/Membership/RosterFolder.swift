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
    /// number at a time, with the version before it; and the files that claimed
    /// a next number and were refused.
    ///
    /// Two members may change the roster at once: two versions with one number,
    /// each following the same version. Every device takes the same one
    /// (``preferred(_:)``), the pinned one's siblings included when `parent`
    /// (the version before it) is known, so a device that pinned the loser moves
    /// to the winner.
    func head(after pinned: RosterVersion, parent: RosterVersion? = nil)
        -> (head: RosterVersion, parent: RosterVersion?, refused: [RosterRefusal]) {
        let byNumber = names()
        var refused: [RosterRefusal] = []
        var (head, before) = (pinned, parent)
        if let parent {
            let (siblings, _) = following(parent, names: byNumber[pinned.number] ?? [])
            head = Self.preferred(siblings + [pinned])
        }
        while let names = byNumber[head.number + 1] {
            let (accepted, refusals) = following(head, names: names)
            refused += refusals
            guard !accepted.isEmpty else { break }
            (head, before) = (Self.preferred(accepted), head)
        }
        return (head, before, refused)
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

    /// Of versions with one number that follow one version, the one every
    /// device takes: a version whose signer another one removes loses (so a
    /// device that is being revoked cannot undo its revocation by writing a
    /// version of its own), then the smallest hash.
    static func preferred(_ candidates: [RosterVersion]) -> RosterVersion {
        let unremoved = candidates.filter { candidate in
            candidates.allSatisfy { other in other.member(candidate.signer) != nil }
        }
        return (unremoved.isEmpty ? candidates : unremoved).min { $0.hash.lexicographicallyPrecedes($1.hash) }!
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
