import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Which state directory writes a device's folder: `writer.json` in it,
/// with the nonce of the session that state directory's processes run in
/// (``StateDirectory``: every process of one machine's device claims the
/// folder with the same nonce) and the state directory's inode: two copies
/// of a state directory never write as one device (docs/format.md § Writer claim).
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
/// - Before each append, compaction, snapshot and removal of old files, the
///   writer checks that the claim still holds its session's nonce (one small
///   read). A copy that even kept the inode (a cloned disk image) starts a
///   session of its own (its `lock` is another file), so once it has taken
///   the folder it is found there: this device's processes stop writing, with one clear error.
///
/// Over a synchronizer the folder is a copy: a clone is caught as soon as
/// the original's `writer.json` has reached it, which is before it mounts
/// unless the two machines never synchronized; a cloned disk image running
/// on two machines is caught when one's claim reaches the other, and what
/// the losing one wrote meanwhile may end in a conflict copy.
final class WriterClaim: Sendable {
    /// The file in the device folder.
    static let fileName = "writer.json"

    /// What a claim says: the file, `{"host":…,"nonce":…,"pid":…,"stateDirectory":…,"stateInode":…}`.
    struct Holder: Codable, Equatable {
        /// Random, one per session of the state directory that claimed the folder.
        var nonce: String
        /// The inode of the state directory the process runs from (0: unknown).
        var stateInode: UInt64
        /// For messages: the state directory's path, the host and the process that wrote the claim.
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
    private let state = Mutex(State())

    private struct State {
        /// The claim file's bytes as last found holding this session's nonce: the same bytes need no decoding.
        var confirmed: [UInt8]?
        /// Why this process writes no more: another state directory's process took the folder.
        var displacement: KVStoreError?
    }

    /// A new session's nonce: 128 random bits in hex.
    static func newNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
    }

    /// A claim for this process, running in the session `nonce` of the state
    /// directory at `statePath` (whose inode is `stateInode`).
    init(statePath: String, stateInode: UInt64, nonce: String) {
        mine = Holder(nonce: nonce, stateInode: stateInode, statePath: statePath,
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

    /// Writes this process's claim into `folder`, unless it holds this session's already.
    func claim(in folder: Folder) throws(KVStoreError) {
        try state.withLock { state throws(KVStoreError) in
            if let bytes = try? folder.read(Self.fileName, limit: SyncDirectory.smallFileLimit),
               JSONDocument.decoded(Holder.self, from: bytes)?.nonce == mine.nonce {
                state.confirmed = bytes
                return
            }
            try write(into: folder, &state)
        }
    }

    /// Whether another state directory's process has claimed the folder, so this one writes no more.
    var displacement: KVStoreError? { state.withLock { $0.displacement } }

    /// Throws when another state directory's process (a copy of this one)
    /// has claimed `folder` since this session did; from then on this process
    /// writes no more. A claim that has gone (the folder was removed and is
    /// being written again) is made anew. The claim is read each time and its
    /// nonce compared: a claim replaced under the same inode number (written
    /// over in place, or a new file that got a freed inode's number) is another's all the same.
    func confirm(in folder: Folder) throws(KVStoreError) {
        try state.withLock { state throws(KVStoreError) in
            if let displacement = state.displacement { throw displacement }
            let bytes = try? folder.read(Self.fileName, limit: SyncDirectory.smallFileLimit)
            if let bytes, bytes == state.confirmed { return }
            guard let bytes, let holder = JSONDocument.decoded(Holder.self, from: bytes) else {
                try? write(into: folder, &state)
                return
            }
            if holder.nonce == mine.nonce {
                state.confirmed = bytes
                return
            }
            let error = KVStoreError.io(path: folder.path, reason: "another process (\(holder.description)) now writes as this same device, from a copy of this state directory; this one stops writing: unmount it, and give each its own state directory")
            state.displacement = error
            throw error
        }
    }

    private func write(into folder: Folder, _ state: inout State) throws(KVStoreError) {
        let bytes = JSONDocument.sorted(mine) + [0x0A]
        try folder.writeAtomically(Self.fileName, bytes)
        state.confirmed = bytes
    }
}
