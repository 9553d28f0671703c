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
    /// What a process that finds the lock held does to ask its holder for it
    /// (``OwnJournal``: a mount keeps the journal's lock between its
    /// writes until someone asks); nil: nothing, the holder lets go by itself.
    private let ask: (@Sendable () -> Void)?

    /// The lock file `name` in `folder`, created (0600) when missing; nil
    /// when it is missing and `create` is false. While it is held, a process
    /// that wants it calls `ask` (and again every 100 ms).
    init?(_ name: String, in folder: Folder, create: Bool = true, ask: (@Sendable () -> Void)? = nil) throws(KVStoreError) {
        let mode: FileDescriptor.AccessMode = create ? .readWrite : .readOnly
        guard let file = try folder.openFile(name, mode, options: create ? [.create] : []) else { return nil }
        self.file = file
        self.ask = ask
        path = folder.path + "/" + name
    }

    deinit { try? file.close() }

    /// Takes the lock, waiting as long as another holder keeps it.
    func lock(_ mode: Mode = .exclusive) throws(KVStoreError) {
        guard ask == nil else { return try lock(before: nil) }
        do {
            try file.lock(mode)
        } catch {
            throw KVStoreError(error, path: path, doing: "cannot lock")
        }
    }

    /// Takes the lock alone, waiting at most `patience` for another holder:
    /// then throws ``KVStoreError/journalBusy(path:holder:seconds:)``, naming
    /// the holder as `/proc/locks` does. One `flock` when nobody holds it.
    func lock(within patience: Duration) throws(KVStoreError) {
        do throws(KVStoreError) {
            try lock(before: ContinuousClock.now + patience)
        } catch {
            let holders = holders().map { pid in "pid \(pid)" + ((try? ProcessFolder(pid: pid).name()).map { " (\($0))" } ?? "") }
            throw .journalBusy(path: path, holder: holders.isEmpty ? "another process" : holders.joined(separator: " and "),
                               seconds: Int(patience.components.seconds))
        }
    }

    /// Takes the lock alone, asking its holder for it (``ask``), until
    /// `deadline` (nil: for as long as it takes); throws once that passed.
    private func lock(before deadline: ContinuousClock.Instant?) throws(KVStoreError) {
        var pause: UInt32 = 200  // µs, doubling to 10 ms: a turn another process takes lasts a millisecond or less
        var askedAt: ContinuousClock.Instant?
        while !tryLock() {
            let now = ContinuousClock.now
            if let deadline, now >= deadline { throw .io(path: path, reason: "still held") }
            if let ask, askedAt.map({ now - $0 > .milliseconds(100) }) ?? true {
                ask()
                askedAt = now
            }
            usleep(pause)
            pause = min(pause * 2, 10_000)
        }
    }

    /// Whether a process waits for this lock (`flock` blocking on it, as
    /// `/proc/locks` shows): one that does not know to ask (``ask``).
    var isWaitedFor: Bool { FileLockHolders.waiting(for: file) }

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
