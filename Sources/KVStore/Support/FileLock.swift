import Foundation
import LinuxSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A lock between processes: `flock(2)` on a file of the state directory,
/// which the kernel lets go of when its holder exits, however it exits.
///
/// A flock belongs to the open file description, not to the process: two
/// `FileLock`s opened on one file exclude each other even within one
/// process, but one `FileLock` taken on two threads does not. So each store
/// opens its own, and orders its own threads with a `Mutex` before they reach it.
final class FileLock: Sendable {
    /// How the lock is held.
    enum Mode: Sendable {
        /// With other shared holders.
        case shared
        /// Alone.
        case exclusive

        fileprivate var operation: Int32 { self == .shared ? LOCK_SH : LOCK_EX }
    }

    /// The lock file's path, for messages.
    let path: String
    private let file: FileDescriptor

    /// The lock file `name` in `folder`, created (0600) when missing; nil
    /// when it is missing and `create` is false.
    init?(_ name: String, in folder: Folder, create: Bool = true) throws(KVStoreError) {
        let mode: FileDescriptor.AccessMode = create ? .readWrite : .readOnly
        guard let file = try folder.openFile(name, mode, options: create ? [.create] : []) else { return nil }
        self.file = file
        path = folder.path + "/" + name
    }

    deinit { try? file.close() }

    /// Takes the lock, waiting as long as another holder keeps it.
    func lock(_ mode: Mode = .exclusive) throws(KVStoreError) {
        if case let .failure(error) = systemCallResult("flock", path, { flock(file.rawValue, mode.operation) }) {
            throw KVStoreError(error, path: path, doing: "cannot lock")
        }
    }

    /// Takes the lock alone, waiting at most `patience` for another holder:
    /// then throws ``KVStoreError/journalBusy(path:holder:seconds:)``, naming
    /// the holder as `/proc/locks` does. One `flock` when nobody holds it.
    func lock(within patience: Duration) throws(KVStoreError) {
        let deadline = ContinuousClock.now + patience
        var pause: UInt32 = 500  // µs, doubling to 10 ms: a turn another process takes lasts a millisecond or less
        while !tryLock() {
            guard ContinuousClock.now < deadline else {
                throw .journalBusy(path: path, holder: FileLockHolders.describe(file) ?? "another process",
                                   seconds: Int(patience.components.seconds))
            }
            usleep(pause)
            pause = min(pause * 2, 10_000)
        }
    }

    /// Takes the lock if nobody holds it in a way that excludes `mode`; held
    /// already, it changes to `mode` (not atomically: flock lets go first).
    func tryLock(_ mode: Mode = .exclusive) -> Bool {
        if case .success = systemCallResult("flock", path, { flock(file.rawValue, mode.operation | LOCK_NB) }) { return true }
        return false
    }

    /// Lets go of the lock.
    func unlock() {
        systemCallResult("flock", path) { flock(file.rawValue, LOCK_UN) }
    }

    /// Runs `body` holding the lock alone.
    func exclusively<T>(_ body: () throws(KVStoreError) -> T) throws(KVStoreError) -> T {
        try lock()
        defer { unlock() }
        return try body()
    }

    /// What the file says (its holder writes who it is), trimmed; nil when it says nothing.
    func text() -> String? {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = (try? bytes.withUnsafeMutableBytes { try file.read(fromAbsoluteOffset: 0, into: $0) }) ?? 0
        let text = String(decoding: bytes.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Replaces what the file says.
    func write(_ text: String) {
        try? file.resize(to: 0)
        _ = try? file.writeAll(toAbsoluteOffset: 0, Array(text.utf8))
    }
}
