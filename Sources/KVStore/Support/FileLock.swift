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
    typealias Mode = FileLockMode

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
        do {
            try file.lock(mode)
        } catch {
            throw KVStoreError(error, path: path, doing: "cannot lock")
        }
    }

    /// Takes the lock if nobody holds it in a way that excludes `mode`; held
    /// already, it changes to `mode` (not atomically: flock lets go first).
    func tryLock(_ mode: Mode = .exclusive) -> Bool {
        (try? file.tryLock(mode)) ?? false
    }

    /// Lets go of the lock.
    func unlock() {
        file.unlock()
    }

    /// The processes holding the lock, as `/proc/locks` names them (see
    /// `FileDescriptor.flockHolders()`): for a message saying who keeps it.
    func holders() -> [pid_t] {
        (try? file.flockHolders()) ?? []
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
