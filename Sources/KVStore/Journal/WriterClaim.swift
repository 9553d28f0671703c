import Foundation
import Synchronization
import SystemPackage
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
        /// The claim file last found holding this session's nonce, held open, and its status then (``confirm(in:)``).
        var held: (file: FileDescriptor, stamp: FileStamp)?
        /// Why this process writes no more: another state directory's process took the folder.
        var displacement: KVStoreError?
        /// The folder claimed, which reads and writes the claim (signed, in a sealed store: ``SignedFile``).
        var folder: DeviceFolder?
    }

    /// What `fstatat` tells of a claim file, all of which a change to it changes.
    struct FileStamp: Equatable {
        var device: UInt64, inode: UInt64, size: Int64
        var modified: timespec, changed: timespec

        init(_ status: Stat) {
            let raw = status.rawValue
            (device, inode, size) = (UInt64(raw.st_dev), UInt64(raw.st_ino), Int64(raw.st_size))
            (modified, changed) = (raw.st_mtim, raw.st_ctim)
        }

        static func == (a: FileStamp, b: FileStamp) -> Bool {
            (a.device, a.inode, a.size) == (b.device, b.inode, b.size)
                && (a.modified.tv_sec, a.modified.tv_nsec, a.changed.tv_sec, a.changed.tv_nsec)
                == (b.modified.tv_sec, b.modified.tv_nsec, b.changed.tv_sec, b.changed.tv_nsec)
        }

        /// How long after its last change a file's status is trusted to
        /// change with its content: a file's times have the granularity of
        /// its filesystem (a clock tick, a second, FAT's two), so a change
        /// within that of the last one may leave them as they were (git's "racily clean" index entries).
        static let settled: TimeInterval = 2

        /// Whether the file last changed long enough before `now` for its status to tell any later change.
        func isSettled(now: Date = Date()) -> Bool {
            let last = max(Double(modified.tv_sec) + Double(modified.tv_nsec) / 1e9, Double(changed.tv_sec) + Double(changed.tv_nsec) / 1e9)
            return now.timeIntervalSince1970 - last > Self.settled
        }
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

    /// The claim in `deviceFolder` (`folder`, opened), or nil when there is none (or it is unreadable or refused).
    static func holder(in folder: Folder, of deviceFolder: DeviceFolder) -> Holder? {
        deviceFolder.readSigned(fileName, in: folder).flatMap { JSONDocument.decoded(Holder.self, from: $0) }
    }

    /// The claim of `deviceFolder` when a state directory other than the one whose inode is `stateInode` made
    /// it: that state directory is then a copy of the claim's (a copy gets a new inode, a rename keeps it).
    static func holder(in folder: Folder, of deviceFolder: DeviceFolder, fromAnotherThan stateInode: UInt64) -> Holder? {
        guard let holder = holder(in: folder, of: deviceFolder), holder.stateInode != 0, stateInode != 0,
              holder.stateInode != stateInode else { return nil }
        return holder
    }

    /// Writes this process's claim into `deviceFolder` (`folder`, opened), unless it holds this session's already.
    func claim(in folder: Folder, of deviceFolder: DeviceFolder) throws(KVStoreError) {
        try state.withLock { state throws(KVStoreError) in
            state.folder = deviceFolder
            if let bytes = try? folder.read(Self.fileName, limit: SyncDirectory.smallFileLimit),
               decoded(bytes, &state)?.nonce == mine.nonce {
                state.confirmed = bytes
                return
            }
            try write(into: folder, &state)
        }
    }

    /// The claim `bytes` hold, or nil when they hold none (or, sealed, one refused: it is then written anew).
    private func decoded(_ bytes: [UInt8], _ state: inout State) -> Holder? {
        let content = state.folder.map { $0.opened(Self.fileName, bytes: bytes, orLastTaken: false) } ?? bytes
        return content.flatMap { JSONDocument.decoded(Holder.self, from: $0) }
    }

    /// Whether another state directory's process has claimed the folder, so this one writes no more.
    var displacement: KVStoreError? { state.withLock { $0.displacement } }

    /// Makes this process write no more, for `reason` (the store was sealed, and this device is no
    /// member): every later append throws it. Returns false when it had stopped already.
    func stop(_ reason: KVStoreError) -> Bool {
        state.withLock { state in
            guard state.displacement == nil else { return false }
            state.displacement = reason
            return true
        }
    }

    /// Throws when another state directory's process (a copy of this one)
    /// has claimed `folder` since this session did; from then on this process
    /// writes no more. A claim that has gone (the folder was removed and is
    /// being written again) is made anew.
    ///
    /// Before every append, so in one `fstatat`: the claim file found holding
    /// this session's nonce is held open, so no new file can get its inode
    /// number, and while the file there has that inode and the same size and
    /// times, it is that file unchanged (a copy's claim is written to a new
    /// file and renamed into place, as a synchronizer does; a write in place
    /// changes its times, unless within the filesystem's time granularity of
    /// the last change, which is why a file changed less than
    /// ``FileStamp/settled`` before it was read is read again each time,
    /// through the descriptor held: one `pread` more, rather than an open,
    /// a read and a close, for the first seconds of every mount).
    /// Otherwise the claim is read, and its nonce compared: a claim replaced
    /// under the same inode number is another's all the same.
    func confirm(in folder: Folder) throws(KVStoreError) {
        try state.withLock { state throws(KVStoreError) in
            if let displacement = state.displacement { throw displacement }
            if let held = state.held, let status = folder.entry(Self.fileName), FileStamp(status) == held.stamp {
                if held.stamp.isSettled() { return }
                // Changed lately, it may have changed in place since without its status showing it: its
                // bytes are read again, through the descriptor held (the file the name still names).
                if let bytes = try? folder.read(held.file, named: Self.fileName, limit: SyncDirectory.smallFileLimit),
                   bytes == state.confirmed { return }
            }
            let file = (try? folder.openFile(Self.fileName, .readOnly)) ?? nil
            let bytes = file.flatMap { try? folder.read($0, named: Self.fileName, limit: SyncDirectory.smallFileLimit) }
            defer { hold(file, if: bytes != nil && bytes == state.confirmed, &state) }
            if let bytes, bytes == state.confirmed { return }
            guard let bytes, let holder = decoded(bytes, &state) else {
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

    /// Holds `file`, the claim file just read, as confirmed, if `confirmed`; closes it otherwise.
    private func hold(_ file: FileDescriptor?, if confirmed: Bool, _ state: inout State) {
        guard let file else { return }
        guard confirmed, let status = try? file.stat() else {
            try? file.close()
            return
        }
        try? state.held?.file.close()
        state.held = (file, FileStamp(status))
    }

    deinit {
        state.withLock { try? $0.held?.file.close() }
    }

    private func write(into folder: Folder, _ state: inout State) throws(KVStoreError) {
        let content = JSONDocument.sorted(mine) + [0x0A]
        let bytes = try state.folder.map { files throws(KVStoreError) in try files.signed(Self.fileName, content) } ?? content
        try folder.writeAtomically(Self.fileName, bytes)
        state.confirmed = bytes
    }
}
