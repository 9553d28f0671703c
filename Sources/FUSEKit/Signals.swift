import Glibc
import Synchronization
import SystemPackage

/// The write end of the pipe that the signal handler writes the signal number
/// to; -1 until ``SignalStopper`` first installs a handler. A plain global
/// with a constant initializer, so the handler reads it without running any
/// initialization code.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// The signal handler: async-signal-safe, it only writes one byte to the
/// pipe, with the bare `write(2)` (no Swift wrapper: nothing but
/// async-signal-safe calls may run here).
private let forwardSignal: @convention(c) (Int32) -> Void = { signal in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(signalPipeWriteEnd, &byte, 1)
    errno = saved
}

/// Turns signals into ``FUSESession/stop()`` calls for the sessions that
/// asked with ``FUSESession/stopOnSignals(_:)``.
///
/// A signal handler may not take locks or allocate, and libfuse's own
/// handlers only set the exit flag, which a loop blocked in `read` does not
/// see (the signal may even land on another thread). So the handler writes
/// to a pipe and a watcher thread calls `stop()` on every registered session.
///
/// Why not Dispatch signal sources (or swift-service-lifecycle, which uses
/// them): on Linux they read a `signalfd`, which only sees a signal that is
/// blocked in every thread of the process. libfuse's worker threads, and
/// whatever threads the program started before, do not block it, so the
/// signal would take its default action (killing the daemon before it
/// commits) or, set to SIG_IGN, be lost. A handler that writes one byte
/// works on whichever thread the kernel picks.
final class SignalStopper: Sendable {
    static let shared = SignalStopper()

    private struct WeakSession {
        weak var session: FUSESession?
    }

    private struct State {
        var sessions: [ObjectIdentifier: WeakSession] = [:]
        var previousActions: [Int32: sigaction] = [:]
        var readEnd: FileDescriptor?
    }

    private let state = Mutex(State())

    /// Registers `session` and installs the handler for `signals`.
    func register(_ session: FUSESession, signals: [Int32]) {
        state.withLock { state in
            if state.readEnd == nil {
                guard let (readEnd, writeEnd) = try? FileDescriptor.pipe(options: .closeOnExec) else { return }
                state.readEnd = readEnd
                signalPipeWriteEnd = writeEnd.rawValue
                var thread = pthread_t()
                pthread_create(&thread, nil, { _ in SignalStopper.shared.watch(); return nil }, nil)
                pthread_detach(thread)
            }
            state.sessions[ObjectIdentifier(session)] = WeakSession(session: session)
            for signal in signals where state.previousActions[signal] == nil {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = forwardSignal
                action.sa_flags = SA_RESTART
                sigemptyset(&action.sa_mask)
                var previous = sigaction()
                if sigaction(signal, &action, &previous) == 0 { state.previousActions[signal] = previous }
            }
        }
    }

    /// Forgets `session`; restores the previous handlers once no session is left.
    func unregister(_ session: FUSESession) {
        state.withLock { state in
            guard state.sessions.removeValue(forKey: ObjectIdentifier(session)) != nil else { return }
            state.sessions = state.sessions.filter { $0.value.session != nil }
            guard state.sessions.isEmpty else { return }
            for (signal, var previous) in state.previousActions { _ = sigaction(signal, &previous, nil) }
            state.previousActions = [:]
        }
    }

    /// The watcher thread: stops every registered session on each signal.
    private func watch() {
        guard let readEnd = state.withLock({ $0.readEnd }) else { return }
        var byte: UInt8 = 0
        while true {
            let count = try? withUnsafeMutableBytes(of: &byte) { try readEnd.read(into: $0, retryOnInterrupt: true) }
            guard let count, count > 0 else { return }
            let targets = state.withLock { $0.sessions.values.compactMap(\.session) }
            for session in targets { session.stop() }
        }
    }
}
