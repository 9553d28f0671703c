import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// An `eventfd(2)`: a counter in the kernel that one thread raises to wake
/// another blocked in ``Poll`` (or in ``wait(timeout:)``), with no spinning
/// and no pipe's two descriptors. Close-on-exec and non-blocking.
public final class EventCounter: Sendable {
    /// The descriptor, readable while the counter is above zero: for ``Poll``.
    public let descriptor: FileDescriptor

    /// A counter at zero.
    public init() throws(SystemCallError) {
        // eventfd(2)'s header is not in Swift's Glibc module; its flags are O_CLOEXEC's and O_NONBLOCK's values.
        typealias EventFD = @convention(c) (UInt32, Int32) -> Int32
        guard let eventfd = cFunction("eventfd", as: EventFD.self) else { throw SystemCallError("eventfd", errno: .noFunction) }
        descriptor = FileDescriptor(rawValue: try systemCall("eventfd") { eventfd(0, O_CLOEXEC | O_NONBLOCK) })
    }

    deinit { try? descriptor.close() }

    /// Raises the counter by one, waking whoever waits for it. Cannot fail
    /// short of 2^64 - 2 signals never taken.
    public func signal() {
        var one: UInt64 = 1
        _ = try? systemCall("write") { Glibc.write(descriptor.rawValue, &one, 8) }
    }

    /// Sets the counter back to zero; returns whether it was above.
    @discardableResult
    public func take() -> Bool {
        var value: UInt64 = 0
        return ((try? systemCall("read") { Glibc.read(descriptor.rawValue, &value, 8) }) ?? 0) == 8
    }

    /// Waits until the counter is above zero, or `timeout` has passed
    /// (forever when nil); leaves the counter as it is.
    ///
    /// - Returns: whether it was signalled.
    public func wait(timeout: Duration?) -> Bool {
        ((try? descriptor.wait(for: .readable, timeout: timeout)) ?? []).contains(.readable)
    }
}
