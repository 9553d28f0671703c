import Foundation
import LinuxSystem
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A device's private folder (never in the sync directory): its id, the lock
/// that gives it to one process, the store id it joined, the stamps it last
/// saw (for InitialSyncChange), and its change log.
///
/// It is created 0700 (with missing parents, as the XDG base-directory spec
/// asks), its files 0600, and nothing in it is opened through a link (see
/// ``Folder``). Opened read-only, it is neither created nor written.
final class StateDirectory: Sendable {
    let path: String
    /// The folder; nil when opened read-only and it does not exist.
    private let folder: Folder?
    private let holding = Mutex(Holding())

    /// This process's hold on the folder.
    private struct Holding {
        /// The lock file, while this process holds it.
        var lockFile: FileDescriptor?
        /// What holds the folder, as the lock file says (`mount <mount point>` for a mount).
        var owner = ""
    }

    init(path: String, readOnly: Bool = false) throws(KVStoreError) {
        self.path = path
        folder = try Folder.open(path, create: !readOnly, writable: !readOnly)
        folder?.removeStaleTemporaries()
    }

    deinit { unlock() }

    var changeLogPath: String { path + "/changes.log" }

    /// What a copy of this folder does not carry: its inode number, which a
    /// copy (`cp -r`, a restore elsewhere) gets anew and a rename keeps (0: unknown).
    var inode: UInt64 { folder?.inode ?? 0 }

    /// Takes the folder for this process, or says who has it.
    ///
    /// A holder that is going away is waited for (see ``patience(with:)``).
    func lock(owner: String) throws(KVStoreError) {
        // Non-nil: a file opened with .create is never missing.
        let file = try writableFolder().openFile("lock", .readWrite, options: [.create])!
        do { try take(file, LOCK_EX) } catch { try? file.close(); throw error }
        holding.withLock { $0.lockFile = file }
        recordOwner(owner)
    }

    /// For a reader, which takes no lock: throws as ``lock(owner:)`` would
    /// when a process holds the folder (so the command line goes through its
    /// mount), after waiting as long as `lock` would for a holder going away.
    func checkNotHeld() throws(KVStoreError) {
        guard let file = try folder?.openFile("lock", .readOnly) else { return }
        defer { try? file.close() }
        try take(file, LOCK_SH)
    }

    /// Takes `operation` (LOCK_EX, LOCK_SH) on the lock file, waiting while
    /// its holder's ``patience(with:)`` lasts; throws who holds it after that.
    private func take(_ file: FileDescriptor, _ operation: Int32) throws(KVStoreError) {
        let start = Date()
        while case .failure = systemCallResult("flock", path + "/lock", { flock(file.rawValue, operation | LOCK_NB) }) {
            let holder = holder()
            guard Date().timeIntervalSince(start) < Self.patience(with: holder) else {
                throw .stateDirectoryBusy(path: path, holder: holder ?? "another process")
            }
            usleep(5000)
        }
    }

    /// How many seconds a held lock is waited for, by what its lock file says of the holder.
    ///
    /// - A holder that has said it is closing (``recordClosing()``: an
    ///   unmounted daemon committing its last writes, a library store being
    ///   closed) lets go once its last fsync is done: up to 30 s on a loaded
    ///   machine and a slow disk, so `umount m && kvfs get k` just works.
    /// - This process: a lock it let go of a moment ago can still be held by
    ///   a child it is spawning (the child's copy of the descriptor lives
    ///   until its exec), up to 5 s on a loaded machine.
    /// - Anyone else holds the folder for good: not waited for.
    static func patience(with holder: String?) -> TimeInterval {
        guard let holder else { return 0 }
        if holder.hasSuffix(closingMark) { return 30 }
        return namesThisProcess(holder) ? 5 : 0
    }

    /// What ends the lock file's text once its holder is closing.
    private static let closingMark = " (closing)"

    /// Replaces what the lock file says about its holder (its pid, and a mount point once mounted).
    func recordOwner(_ owner: String) {
        holding.withLock { holding in
            holding.owner = owner
            write(owner, into: holding)
        }
    }

    /// Tells processes waiting for the folder that this one is letting go of it.
    func recordClosing() {
        holding.withLock { holding in write(holding.owner + Self.closingMark, into: holding) }
    }

    private func write(_ holder: String, into holding: Holding) {
        guard let lockFile = holding.lockFile else { return }
        try? lockFile.resize(to: 0)
        _ = try? lockFile.writeAll(toAbsoluteOffset: 0, Array("pid \(getpid()) \(holder)\n".utf8))
    }

    /// Where the store is mounted, as what holds the folder says.
    var mountPoint: String? {
        let owner = holding.withLock { $0.owner }
        return owner.hasPrefix("mount ") ? String(owner.dropFirst("mount ".count)) : nil
    }

    /// Lets go of the folder.
    func unlock() {
        holding.withLock { holding in
            try? holding.lockFile?.close()
            holding.lockFile = nil
        }
    }

    /// Whether a lock file's text (`pid <pid> <owner>`) names this process.
    private static func namesThisProcess(_ holder: String) -> Bool {
        holder.split(separator: " ").dropFirst().first.map(String.init) == String(getpid())
    }

    /// What the lock file says about whoever holds it.
    private func holder() -> String? {
        guard let bytes = try? folder?.read("lock"), !bytes.isEmpty else { return nil }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// This device's id, created on first use. Read-only, a folder without
    /// one gets an id for this process alone, which nothing records.
    func deviceID() throws(KVStoreError) -> DeviceID {
        if let bytes = try folder?.read("device-id"),
           let id = DeviceID(hex: String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) {
            return id
        }
        guard folder?.isWritable == true else { return DeviceID.random() }
        return try newDeviceID()
    }

    /// Gives this folder a new device id (it was found to be a copy of another device's folder).
    func newDeviceID() throws(KVStoreError) -> DeviceID {
        let id = DeviceID.random()
        try writableFolder().writeAtomically("device-id", Array((id.hex + "\n").utf8))
        return id
    }

    /// The store id this device last served, if any.
    var rememberedStoreID: String? {
        get {
            guard let bytes = try? folder?.read("store-id") else { return nil }
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        set { try? folder?.writeAtomically("store-id", Array(((newValue ?? "") + "\n").utf8)) }
    }

    /// The latest stamp this device wrote, as it last noted it: its clock
    /// starts past it even when its folder in the sync directory is gone.
    var lastOwnStamp: HLCTimestamp? {
        get {
            guard let bytes = try? folder?.read("last-stamp") else { return nil }
            return UInt64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)).map(HLCTimestamp.init)
        }
        set { try? folder?.writeAtomically("last-stamp", Array(((newValue.map { String($0.rawValue) } ?? "") + "\n").utf8)) }
    }

    /// What this device showed when it last ran, or nil for a new device:
    /// the stamp of each visible key, and of each key the quota rule set aside.
    func seen() -> (visible: [StoreKey: Stamp], setAside: [StoreKey: Stamp])? {
        guard let bytes = try? folder?.read("seen.log") else { return nil }
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        var seen: (visible: [StoreKey: Stamp], setAside: [StoreKey: Stamp]) = ([:], [:])
        for record in scan.records {
            switch record.operation {
            case let .remove(key): seen.visible[key] = record.stamp
            case let .put(key, _): seen.setAside[key] = record.stamp
            default: break
            }
        }
        return seen
    }

    /// Remembers what this device shows, as framed records (reusing the
    /// journal's format; only the stamps count): a visible key as a removal,
    /// a set-aside one as a put.
    func saveSeen(visible: [StoreKey: Stamp], setAside: [StoreKey: Stamp]) {
        var bytes: [UInt8] = []
        for (key, stamp) in visible { bytes += RecordFrame.encode(JournalRecord(stamp: stamp, operation: .remove(key: key))) }
        for (key, stamp) in setAside {
            bytes += RecordFrame.encode(JournalRecord(stamp: stamp, operation: .put(key: key, value: .bool(false))))
        }
        try? folder?.writeAtomically("seen.log", bytes)
    }

    private func writableFolder() throws(KVStoreError) -> Folder {
        guard let folder, folder.isWritable else { throw .readOnly(path: path) }
        return folder
    }
}
