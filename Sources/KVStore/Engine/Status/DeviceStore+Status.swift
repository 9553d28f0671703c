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

    /// The status, the disk looked at without `engine`'s lock (``EngineState/statusInputs(present:)``).
    private func makeStatus(now: Date, staleAfter: TimeInterval) -> StoreStatus {
        let mountPoint = state.mountPoint
        let folders = survey.survey()
        let relocation = sync.root.relocation()
        let inputs = engine.withLock { $0.statusInputs(present: folders.keys) }
        return inputs.status(now: now, staleAfter: staleAfter, folders: folders, relocation: relocation,
                             stateDirectory: stateDirectory.path, mountPoint: mountPoint)
    }
}
