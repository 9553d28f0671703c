import Glibc

/// A value behind a pthread read-write lock: ``FUSESession``'s state (never
/// held while calling into a filesystem). Like `Mutex`, it holds what it
/// guards, so the state cannot be reached without the lock.
///
/// Why not the standard library's `Synchronization.Mutex`: a session's
/// notifications (`notifyInvalidateInode` and friends) hold this lock shared
/// for the whole libfuse call, so that `run` cannot unmount and close the
/// `/dev/fuse` descriptor under them, and such a call can wait in the kernel
/// (for a page lock, or a directory's lock held by a request in progress).
/// With a mutex the notifications from several request threads would wait
/// for each other; shared, they proceed together and only unmounting waits.
/// The Synchronization module has `Mutex` and atomics, no reader-writer lock.
final class ReadWriteLocked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: the pthread_rwlock_t lives at a stable heap address and is
    // only touched through pthread calls, which are thread-safe; `value` is
    // only reached through the two methods below, which hold it.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` on the value, holding the lock shared.
    @inline(__always)
    func withReadLock<T, E: Error>(_ body: (Value) throws(E) -> T) throws(E) -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// Runs `body` on the value, holding the lock exclusively.
    @inline(__always)
    func withWriteLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
