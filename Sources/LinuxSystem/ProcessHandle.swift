import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A process held by a pidfd (`pidfd_open(2)`): signalled and waited for as
/// the very process it was opened on. A pid is only a number: once that
/// process is gone the kernel gives it to the next one, and `kill(pid)` may
/// reach a stranger; a pidfd never changes process, and in any pid
/// namespace it is the same process.
public final class ProcessHandle: Sendable {
    /// The pidfd, readable once the process has ended: for ``Poll``.
    public let descriptor: FileDescriptor
    /// The pid it was opened with, in this process's pid namespace, for messages.
    public let pid: pid_t

    /// Opens process `pid` (as this process's pid namespace numbers it).
    ///
    /// - Throws: `ESRCH` when no such process runs, `ENOSYS` on a kernel
    ///   older than 5.3 or a C library without `pidfd_open` (glibc 2.36).
    public init(pid: pid_t) throws(SystemCallError) {
        typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
        guard let open = cFunction("pidfd_open", as: PidfdOpen.self) else { throw SystemCallError("pidfd_open", "pid \(pid)", errno: .noFunction) }
        descriptor = FileDescriptor(rawValue: try systemCall("pidfd_open", "pid \(pid)") { open(pid, 0) })
        self.pid = pid
    }

    deinit { try? descriptor.close() }

    /// Sends `signal` to the process (`pidfd_send_signal(2)`).
    ///
    /// - Throws: `ESRCH` once it has ended (even if its pid is someone else's by now).
    public func send(_ signal: Int32) throws(SystemCallError) {
        // (int pidfd, int sig, siginfo_t *info, unsigned int flags); glibc 2.36 has it, Swift's Glibc module lacks the header.
        typealias PidfdSendSignal = @convention(c) (Int32, Int32, UnsafeMutableRawPointer?, UInt32) -> Int32
        guard let send = cFunction("pidfd_send_signal", as: PidfdSendSignal.self) else {
            throw SystemCallError("pidfd_send_signal", "pid \(pid)", errno: .noFunction)
        }
        try systemCall("pidfd_send_signal", "pid \(pid)") { send(descriptor.rawValue, signal, nil, 0) }
    }

    /// Waits until the process has ended as a whole (its last thread too),
    /// or `timeout` has passed (forever when nil). Its parent need not have
    /// reaped it.
    ///
    /// - Returns: whether it has ended.
    public func waitForExit(timeout: Duration?) -> Bool {
        ((try? descriptor.wait(for: .readable, timeout: timeout)) ?? []).contains(.readable)
    }
}
