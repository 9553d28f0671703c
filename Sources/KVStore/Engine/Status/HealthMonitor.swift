import Foundation
import Synchronization

/// Says in the log what newly keeps devices from getting each other's writes
/// (a device that does not read this one, a copy that stopped arriving, a
/// quiet or vanished device), and what cleared since: the daemon log's view
/// of what `kvfs status` lists.
final class HealthMonitor: Sendable {
    /// How many new warnings (or cleared ones) one check logs before
    /// summing up the rest in one line: thousands of folders planted in the
    /// sync directory made a line each and pushed everything else out of the
    /// rotated daemon.log. `kvfs status` lists them all.
    static let warningsLoggedAtOnce = 20

    /// Seconds between two checks, unless one is forced.
    static let checkInterval: TimeInterval = 5

    private let state: Mutex<State>
    private let warn: @Sendable (String) -> Void

    private struct State {
        /// The seconds without news after which the log calls a device quiet.
        var staleAfter: TimeInterval
        /// The warnings logged and still standing.
        var logged: Set<String> = []
        var lastCheck = Date.distantPast
    }

    init(staleAfter: TimeInterval, warn: @escaping @Sendable (String) -> Void) {
        state = Mutex(State(staleAfter: staleAfter))
        self.warn = warn
    }

    /// The seconds without news after which the log calls a device quiet (tests shorten it).
    var staleAfter: TimeInterval {
        get { state.withLock { $0.staleAfter } }
        set { state.withLock { $0.staleAfter = newValue } }
    }

    /// Logs the warnings of `status` (the store's status at a time, judging
    /// devices quiet after some seconds) that appeared since the last check,
    /// and notes the ones that cleared; at most every ``checkInterval``, unless `force`.
    func check(force: Bool = false, status: (_ now: Date, _ staleAfter: TimeInterval) -> StoreStatus) {
        state.withLock { state in
            let now = Date()
            guard force || now.timeIntervalSince(state.lastCheck) >= Self.checkInterval else { return }
            state.lastCheck = now
            let warnings = status(now, state.staleAfter).warnings
                .filter { [.notReadingUs, .staleCopy, .quiet, .vanished, .syncDirectoryMoved].contains($0.kind) }  // the readers say the others
            let standing = Set(warnings.map(\.message))
            logAtMost(warnings.filter { !state.logged.contains($0.message) }.map { "\($0.message); \($0.fix)" },
                      rest: "warnings like these; kvfs status lists them all")
            logAtMost(state.logged.subtracting(standing).sorted().map { "resolved: \($0)" }, rest: "warnings resolved")
            state.logged = standing
        }
    }

    /// Logs the first ``warningsLoggedAtOnce`` lines, then one line counting the rest.
    private func logAtMost(_ lines: [String], rest: String) {
        lines.prefix(Self.warningsLoggedAtOnce).forEach(warn)
        if lines.count > Self.warningsLoggedAtOnce {
            warn("… and \(lines.count - Self.warningsLoggedAtOnce) more \(rest)")
        }
    }
}
