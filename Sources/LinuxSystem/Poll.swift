import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// What `poll(2)` waits for on a descriptor, and what it found.
public struct PollEvents: OptionSet, Hashable, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// Data to read, a connection to accept, or (for a pidfd) the process ended (`POLLIN`).
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// Room to write, or a connect finished (`POLLOUT`).
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// An error on the descriptor (`POLLERR`); reported whether asked for or not.
    public static let error = PollEvents(rawValue: Int16(POLLERR))
    /// The other end went away (`POLLHUP`); reported whether asked for or not.
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    /// The number is no open descriptor (`POLLNVAL`); reported whether asked for or not.
    public static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}

/// `poll(2)`, which swift-system does not wrap: blocks until one of several
/// descriptors is ready, or a time passes.
public enum Poll {
    /// Waits until one of `entries` is ready for what it asks, or `timeout`
    /// has passed (forever when nil). A signal does not cut the wait short:
    /// the call is made again for the time left.
    ///
    /// - Returns: what each entry found, in their order; all empty when the time ran out.
    public static func wait(for entries: [(descriptor: FileDescriptor, events: PollEvents)],
                            timeout: Duration?) throws(SystemCallError) -> [PollEvents] {
        var table = entries.map { pollfd(fd: $0.descriptor.rawValue, events: $0.events.rawValue, revents: 0) }
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            let milliseconds = deadline.map { Self.milliseconds(until: $0) } ?? -1
            let result = table.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), milliseconds) }
            if result >= 0 { return table.map { PollEvents(rawValue: $0.revents) } }
            guard errno == EINTR else { throw SystemCallError("poll", errno: Errno(rawValue: errno)) }
        }
    }

    /// The whole milliseconds left until `deadline`, rounded up (so a wait
    /// never ends before it), 0 once it has passed.
    static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}

extension FileDescriptor {
    /// Waits until the descriptor is ready for `events`, or `timeout` has
    /// passed (forever when nil); see ``Poll/wait(for:timeout:)``.
    ///
    /// - Returns: what it found; empty when the time ran out.
    public func wait(for events: PollEvents, timeout: Duration?) throws(SystemCallError) -> PollEvents {
        try Poll.wait(for: [(self, events)], timeout: timeout)[0]
    }
}
