import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which process writes a device's folder: `writer.json` in it, rewritten by
/// each process that opens the folder to write, with a nonce of its own and
/// the state directory it runs from: two processes never write as one device
/// (docs/format.md § Writer claim).
///
/// A state directory copied with its device id (`cp -r state1 state2`, a
/// backup restored on a second machine) would make two writers of one folder:
/// on a shared folder each would show only its own writes and compaction
/// would delete the other's, and over a synchronizer the journal would get
/// conflict copies. Two checks stop that:
///
/// - When a process opens the folder and finds it claimed from another state
///   directory (another inode: a copy gets a new one, a rename keeps it), its
///   state directory is the copy: the store gives it a new device id
///   (``DeviceStore`` says so in one line) and the folder stays the original's.
/// - Before each append and compaction, the writer checks that the claim is
///   still its own (one `fstatat` while the file is unchanged). A copy that
///   even kept the inode (a cloned disk image) and took the folder since is
///   found there: this process stops writing, with one clear error.
///
/// Over a synchronizer the folder is a copy: a clone is caught as soon as
/// the original's `writer.json` has reached it, which is before it mounts
/// unless the two machines never synchronized; a cloned disk image running
/// on two machines is caught when one's claim reaches the other, and what
/// the losing one wrote meanwhile may end in a conflict copy.
final class WriterClaim {
    /// The file in the device folder.
    static let fileName = "writer.json"

    /// What a claim says: the file, `{"host":…,"nonce":…,"pid":…,"stateDirectory":…,"stateInode":…}`.
    struct Holder: Codable, Equatable {
        /// Random, one per process that claimed the folder.
        var nonce: String
        /// The inode of the state directory the process runs from (0: unknown).
        var stateInode: UInt64
        /// For messages: the state directory's path, the host and the process.
        var statePath: String
        var host: String
        var pid: Int

        /// Who it is, for a message.
        var description: String { "pid \(pid) on \(host), state directory \(statePath)" }

        private enum CodingKeys: String, CodingKey {
            case nonce, stateInode, statePath = "stateDirectory", host, pid
        }

        init(nonce: String, stateInode: UInt64, statePath: String, host: String, pid: Int) {
            self.nonce = nonce
            self.stateInode = stateInode
            self.statePath = statePath
            self.host = host
            self.pid = pid
        }

        /// A claim needs its nonce and inode; the fields for messages may be missing or of another type.
        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            nonce = try fields.decode(String.self, forKey: .nonce)
            stateInode = try fields.decode(UInt64.self, forKey: .stateInode)
            statePath = (try? fields.decode(String.self, forKey: .statePath)) ?? "?"
            host = (try? fields.decode(String.self, forKey: .host)) ?? "?"
            pid = (try? fields.decode(Int.self, forKey: .pid)) ?? 0
        }
    }

    /// This process's claim.
    let mine: Holder
    /// The inode of the claim file as this process last saw it its own.
    private var claimedInode: UInt64?
    /// Why this process writes no more: another one took the folder.
    private(set) var displacement: KVStoreError?

    /// A claim for this process, running from the state directory at `statePath` (whose inode is `stateInode`).
    init(statePath: String, stateInode: UInt64) {
        var generator = SystemRandomNumberGenerator()
        mine = Holder(nonce: String(generator.next(), radix: 16) + String(generator.next(), radix: 16),
                      stateInode: stateInode, statePath: statePath,
                      host: ProcessInfo.processInfo.hostName, pid: Int(getpid()))
    }

    /// The claim in `folder`, or nil when there is none (or it is unreadable).
    static func holder(in folder: Folder) -> Holder? {
        guard let bytes = try? folder.read(fileName, limit: SyncDirectory.smallFileLimit) else { return nil }
        return JSONDocument.decoded(Holder.self, from: bytes)
    }

    /// Whether a folder claimed by `holder` belongs to another state directory than this process's.
    func isFromAnotherStateDirectory(_ holder: Holder) -> Bool {
        holder.stateInode != 0 && mine.stateInode != 0 && holder.stateInode != mine.stateInode
    }

    /// Writes this process's claim into `folder`.
    func claim(in folder: Folder) throws(KVStoreError) {
        try folder.writeAtomically(Self.fileName, JSONDocument.sorted(mine) + [0x0A])
        claimedInode = folder.entry(Self.fileName).map { UInt64($0.inode.rawValue) }
    }

    /// Throws when another process has claimed `folder` since this one did;
    /// from then on this process writes no more. A claim that has gone (the
    /// folder was removed and is being written again) is made anew.
    func confirm(in folder: Folder) throws(KVStoreError) {
        if let displacement { throw displacement }
        let inode = folder.entry(Self.fileName).map { UInt64($0.inode.rawValue) }
        if inode != nil && inode == claimedInode { return }
        guard let holder = Self.holder(in: folder) else {
            try? claim(in: folder)
            return
        }
        if holder.nonce == mine.nonce {
            claimedInode = inode
            return
        }
        let error = KVStoreError.io(path: folder.path, reason: "another process (\(holder.description)) now writes as this same device, from a copy of this state directory; this one stops writing: unmount it, and give each its own state directory")
        displacement = error
        throw error
    }
}
