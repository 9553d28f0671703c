import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, on what, and the `errno` it set, so
/// that a message says `open /proc/42/fdinfo/1: Permission denied`, not
/// just "Permission denied".
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The system call's name, e.g. `"open"`.
    public var call: String
    /// What it was called on (a path, a pid, a program), if anything.
    public var subject: String?
    /// The error it returned.
    public var errno: Errno

    /// Creates the error of `call` on `subject`.
    public init(_ call: String, _ subject: String? = nil, errno: Errno) {
        self.call = call
        self.subject = subject
        self.errno = errno
    }

    /// `call subject: message`, e.g. `open /proc/1/fdinfo: Permission denied`.
    public var description: String {
        let message = String(cString: strerror(errno.rawValue))
        return subject.map { "\(call) \($0): \(message)" } ?? "\(call): \(message)"
    }

    /// Runs a swift-system call, naming it in what it throws.
    @inlinable
    public static func naming<T>(_ call: String, _ subject: String? = nil,
                                 _ body: () throws -> T) throws(SystemCallError) -> T {
        do {
            return try body()
        } catch let error as Errno {
            throw SystemCallError(call, subject, errno: error)
        } catch {
            throw SystemCallError(call, subject, errno: .ioError)  // swift-system throws only Errno
        }
    }
}

/// Calls a C system call that returns -1 and sets `errno` on failure, again
/// while it fails with `EINTR` (swift-system's `retryOnInterrupt` policy, for
/// the calls swift-system does not wrap: `accept`, `poll`, `waitpid`,
/// `send`, `recv`, the `openat` family…). Returns its result; throws the error naming `call`.
@inlinable
@discardableResult
public func systemCall<Value: FixedWidthInteger>(_ call: String, _ subject: String? = nil, retryOnInterrupt: Bool = true,
                                                 _ body: () -> Value) throws(SystemCallError) -> Value {
    try systemCallResult(call, subject, retryOnInterrupt: retryOnInterrupt, body).get()
}

/// ``systemCall(_:_:retryOnInterrupt:_:)`` with its failure returned, not
/// thrown: for calls whose failure is an everyday answer (`openat` of a file
/// that is not there), since a throw costs more than the call where throws
/// are watched (a test runner records a backtrace for each).
@inlinable
@discardableResult
public func systemCallResult<Value: FixedWidthInteger>(_ call: String, _ subject: String? = nil, retryOnInterrupt: Bool = true,
                                                       _ body: () -> Value) -> Result<Value, SystemCallError> {
    while true {
        let result = body()
        if result != -1 { return .success(result) }
        let error = Errno(rawValue: Glibc.errno)
        if retryOnInterrupt && error == .interrupted { continue }
        return .failure(SystemCallError(call, subject, errno: error))
    }
}
