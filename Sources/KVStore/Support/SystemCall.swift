import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A system call that failed: which one, and the errno it set.
///
/// The store's files go through swift-system's `FileDescriptor` where it has
/// the call (``swiftSystemCall(_:_:)``), and through ``systemCall(_:_:)``
/// where it does not; either way a failure names its call, so that a
/// message says what the kernel refused.
struct SystemCallError: Error, Equatable {
    /// The call, as its manual page names it (`openat`, `write`, `fsync`).
    var call: String
    var errno: Errno
}

/// Makes a system call that swift-system does not wrap (the `openat` family,
/// `fsync`, `flock`, `fcntl`), under swift-system's policy for its own: the
/// call is made again while it is interrupted (EINTR), and a result of -1 is the errno.
///
/// A result, not a throw, as swift-system's own internals return: a missing
/// file is an everyday answer here, and a throw costs far more than the call
/// where throws are watched (a test runner records each one's backtrace).
@discardableResult
func systemCall(_ call: String, _ body: () -> Int32) -> Result<Int32, SystemCallError> {
    while true {
        let result = body()
        if result != -1 { return .success(result) }
        let error = Errno(rawValue: Glibc.errno)
        if error != .interrupted { return .failure(SystemCallError(call: call, errno: error)) }
    }
}

/// Runs swift-system's wrapper of `call` (which retries EINTR itself), naming the call in its error.
@discardableResult
func swiftSystemCall<T>(_ call: String, _ body: () throws -> T) throws(SystemCallError) -> T {
    do {
        return try body()
    } catch {
        // swift-system's file calls throw nothing but their Errno.
        throw SystemCallError(call: call, errno: error as? Errno ?? .ioError)
    }
}

extension FileDescriptor {
    /// Makes the file's data durable on disk (`fsync`, which swift-system does not wrap).
    func synchronize() throws(SystemCallError) {
        _ = try systemCall("fsync") { fsync(rawValue) }.get()
    }
}

extension KVStoreError {
    /// The store's error for `failure` on `path` while doing `what`: a full
    /// disk (ENOSPC, or EDQUOT from the disk's own quota) is
    /// ``KVStoreError/diskFull(path:)``, which the mount reports as ENOSPC, as
    /// every filesystem does; anything else is an I/O error that names the call.
    init(_ failure: SystemCallError, path: String, doing what: String) {
        if failure.errno == .noSpace || failure.errno == .diskQuotaExceeded {
            self = .diskFull(path: path)
        } else {
            self = .io(path: path, reason: "\(what) (\(failure.call): \(failure.errno))")
        }
    }
}
