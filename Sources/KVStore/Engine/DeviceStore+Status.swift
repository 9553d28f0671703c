import Foundation

/// What `.kvfs/status`, `kvfs status` and `kvfs devices` show, and the
/// health warnings the log gets.
extension DeviceStore {
    /// Seconds without news after which a device that has not closed its
    /// store counts as quiet: ten heartbeats.
    public static let staleAfter: TimeInterval = 300

    /// The store's state now, with every known device's health; a device
    /// that has not closed its store counts as quiet after `staleAfter`
    /// seconds without news.
    public func status(staleAfter: TimeInterval = DeviceStore.staleAfter) -> StoreStatus {
        makeStatus(now: Date(), staleAfter: staleAfter)
    }

    /// Logs what newly keeps devices from getting each other's writes, and
    /// what cleared (``HealthMonitor``): at most every five seconds, unless `force`.
    func logHealth(force: Bool = false) {
        health.check(force: force, status: makeStatus)
    }

    private func makeStatus(now: Date, staleAfter: TimeInterval) -> StoreStatus {
        let mountPoint = state.mountPoint
        return engine.withLock { state in
            state.makeStatus(now: now, staleAfter: staleAfter, stateDirectory: stateDirectory.path, mountPoint: mountPoint)
        }
    }
}
