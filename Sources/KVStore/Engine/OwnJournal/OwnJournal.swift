import Foundation
import Synchronization

/// This device's own journal, as one process of the device has it: one
/// owner for the device's folder and for `journal.lock`, the lock the
/// device's processes take in turn to append, compact or re-open it
/// (``StateDirectory``). It holds two things, each behind a lock of its own,
/// taken on either side of the engine's:
///
/// - this process's *turn*: a `Mutex` that orders this process's threads (a
///   `flock` belongs to the open file, not to a thread), then `journal.lock`.
///   Taken (``take(withinProcess:_:)``) before the engine's lock, never inside
///   it, and only by what appends, compacts or re-opens the journal: a write
///   waits for another process holding nothing that reads need.
/// - the folder (``OwnFolder``): the writer, the reader of what the
///   device's other processes append, what they wrote, the latest own stamp.
///   Taken inside the engine's lock, for as long as an append or a read of
///   the folder lasts; ``EngineState`` holds it and nothing else of this, so
///   nothing under the engine's lock can reach the turn.
///
/// So the lock order is: the turn (its `Mutex`, then `journal.lock`), the
/// engine's lock, the folder's lock. Reads (`cat`, `ls`, `stat`, the status)
/// take the engine's lock (and the folder's) alone, and never wait for
/// another process. A process that keeps the journal longer than
/// ``patience`` (one stopped in a debugger in the middle of an append) costs
/// the writes that wait for it an error naming it
/// (``KVStoreError/journalBusy(path:holder:seconds:)``), and nothing else.
///
/// A mount keeps the lock between its turns (a *lease*, ``allowLease(_:)``)
/// while no other process of the device asks for it: then its writes take
/// no `flock` and need not look whether another process appended (none
/// could), and its watcher need not wake for its own appends. A process
/// that finds the lock held asks for it (``FileLock``: it closes
/// `journal.ask`, which the mount's watcher watches), and the mount lets go
/// (``release()``); it takes the lease again at a write a second after the
/// last asking. A process of an older kvfs, which waits without asking, is
/// found waiting once a second (``releaseIfWaitedFor()``).
final class OwnJournal: Sendable {
    /// How long a write waits for another process's turn, by default.
    static let patience: Duration = .seconds(5)

    /// How long after another process last asked for the journal a mount takes the lease again.
    static let leaseAfterAsking: Duration = .seconds(1)

    /// The device's folder: its writer and the reader of the others' appends, taken inside the engine's lock.
    let folder: OwnFolder

    private struct Turn {
        /// How long one waits for another process (tests shorten it).
        var patience: Duration
        /// Whether this process keeps `journal.lock` between its turns.
        var leased = false
        /// Called with whether the lease is taken (true) or about to be let go (false), while this
        /// process may lease at all: nil otherwise.
        var onLease: (@Sendable (Bool) -> Void)?
    }

    /// This process's threads, one at a time, and the lease.
    private let turn: Mutex<Turn>
    /// `journal.lock`; nil for a store opened read-only, which never appends.
    private let lock: FileLock?
    /// Whether the lease is held, for ``release()`` to look at without waiting for a turn in progress.
    private let isLeased = Atomic(false)
    /// When another process last asked for the journal, in nanoseconds of `DispatchTime`.
    private let askedAt = Atomic<UInt64>(0)

    /// The journal of the folder `opened` holds the writer and reader of
    /// (the reader having read it to its end), its turns taken with `lock`
    /// (`journal.lock`, nil for a store opened read-only).
    init(lock: FileLock?, opened: sending OwnFolder.State) {
        self.lock = lock
        folder = OwnFolder(opened)
        turn = Mutex(Turn(patience: Self.patience))
    }

    /// How long a write waits for another process's turn.
    var patience: Duration {
        get { turn.withLock { $0.patience } }
        set { turn.withLock { $0.patience = newValue } }
    }

    /// Runs `body` in this process's turn at the journal: after this
    /// process's other threads, and, unless `withinProcess`, with
    /// `journal.lock` taken (waiting at most ``patience`` for another
    /// process). `body` is told whether the lock was kept since this
    /// process's last turn (a lease): then no other process appended since.
    func take<T>(withinProcess: Bool = false, _ body: (_ keptSinceLastTurn: Bool) throws(KVStoreError) -> T) throws(KVStoreError) -> T {
        try turn.withLock { state throws(KVStoreError) -> T in
            guard let lock, !withinProcess else { return try body(false) }
            if state.leased { return try body(true) }
            try lock.lock(within: state.patience)
            let result: T
            do throws(KVStoreError) {
                result = try body(false)
            } catch {
                lock.unlock()
                throw error
            }
            keepOrLetGo(lock, &state)
            return result
        }
    }

    /// Runs `body` in this process's turn at the journal, as ``take(withinProcess:_:)`` does, unless
    /// another thread of this process or another process has it now: nil then, and `body` does not run.
    func takeIfFree(_ body: (_ keptSinceLastTurn: Bool) throws(KVStoreError) -> Void) throws(KVStoreError) -> Bool {
        let ran = try turn.withLockIfAvailable { state throws(KVStoreError) -> Bool in
            guard let lock else {
                try body(false)
                return true
            }
            if state.leased {
                try body(true)
                return true
            }
            guard lock.tryLock() else { return false }
            do throws(KVStoreError) {
                try body(false)
            } catch {
                lock.unlock()
                throw error
            }
            keepOrLetGo(lock, &state)
            return true
        }
        return ran ?? false
    }

    /// After a turn that took `journal.lock`: keeps it as the lease (a mount's, nobody having asked for
    /// it lately), or lets it go.
    private func keepOrLetGo(_ lock: FileLock, _ state: inout Turn) {
        let sinceAsked = DispatchTime.now().uptimeNanoseconds &- askedAt.load(ordering: .relaxed)
        if let onLease = state.onLease, sinceAsked > UInt64(Self.leaseAfterAsking.components.seconds) * 1_000_000_000 {
            state.leased = true
            isLeased.store(true, ordering: .relaxed)
            onLease(true)
        } else {
            lock.unlock()
        }
    }

    /// Whether this process keeps the journal's lock between its turns now.
    var isLeasedNow: Bool { isLeased.load(ordering: .relaxed) }

    /// Lets this process keep the journal's lock between its turns (a
    /// mount's, whose watcher calls ``release()`` when another process
    /// asks); `onLease` is told when it takes the lease and before it lets go.
    func allowLease(_ onLease: @escaping @Sendable (Bool) -> Void) {
        turn.withLock { $0.onLease = onLease }
    }

    /// Another process asked for the journal: the lease, if held, is let go.
    func release() {
        askedAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
        guard isLeased.load(ordering: .relaxed) else { return }
        turn.withLock { letGo(&$0) }
    }

    /// Lets go of the lease when a process waits for the journal's lock
    /// without asking (an older kvfs's): once a second.
    func releaseIfWaitedFor() {
        guard isLeased.load(ordering: .relaxed), lock?.isWaitedFor == true else { return }
        release()
    }

    /// Lets go of the lease, and takes it no more: at close.
    func stopLeasing() {
        turn.withLock { state in
            letGo(&state)
            state.onLease = nil
        }
    }

    private func letGo(_ state: inout Turn) {
        guard state.leased else { return }
        // What this process appended is signed before another may append after it (docs/sealed.md § Signing
        // at sync points), rather than wait for this process's next turn; one that cannot be is signed by
        // the next mark, this process's or another's.
        _ = try? folder.withLock { folder throws(KVStoreError) in try folder.sign() }
        state.onLease?(false)
        lock?.unlock()
        state.leased = false
        isLeased.store(false, ordering: .relaxed)
    }
}
