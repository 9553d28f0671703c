import Foundation

/// State shared between threads, reached only under a lock.
///
/// NSLock rather than `Synchronization.Mutex` because Mutex needs macOS 15 and
/// the package still builds for macOS 14.
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) { self.state = state }

    /// Runs `body` with the state, under the lock. Never call out to observers from `body`.
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
