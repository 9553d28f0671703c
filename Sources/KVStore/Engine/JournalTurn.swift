import Synchronization

/// This process's turn at the device's journal: `journal.lock`, which the
/// device's processes take in turn to append, compact or re-open it
/// (``StateDirectory``), and the `Mutex` that orders this process's threads
/// before it (a `flock` does not: it belongs to the open file, not to a thread).
///
/// It is taken before the engine's lock, never inside it: a write waits for
/// another process holding only this, so reads (`cat`, `ls`, `stat`, the
/// status), which take the engine's lock alone, never wait for another
/// process. A process that keeps the journal longer than ``patience`` (one
/// stopped in a debugger in the middle of an append) costs the writes that
/// wait for it an error naming it (``KVStoreError/journalBusy(path:holder:seconds:)``),
/// and nothing else.
final class JournalTurn: Sendable {
    /// How long a write waits for another process's turn, by default.
    static let patience: Duration = .seconds(5)

    /// This process's threads, one at a time; holds how long one waits for another process (tests shorten it).
    private let order: Mutex<Duration>
    /// `journal.lock`; nil for a store opened read-only, which never appends.
    private let lock: FileLock?

    init(lock: FileLock?, patience: Duration = JournalTurn.patience) {
        self.lock = lock
        order = Mutex(patience)
    }

    /// How long a write waits for another process's turn.
    var patience: Duration {
        get { order.withLock { $0 } }
        set { order.withLock { $0 = newValue } }
    }

    /// Runs `body` in this process's turn at the journal: after this
    /// process's other threads, and, unless `withinProcess`, with
    /// `journal.lock` taken (waiting at most ``patience`` for another process).
    func take<T>(withinProcess: Bool = false, _ body: () throws(KVStoreError) -> T) throws(KVStoreError) -> T {
        try order.withLock { patience throws(KVStoreError) -> T in
            guard let lock, !withinProcess else { return try body() }
            try lock.lock(within: patience)
            defer { lock.unlock() }
            return try body()
        }
    }
}
