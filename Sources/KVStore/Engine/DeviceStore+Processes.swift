/// The device's other processes on this machine (``StateDirectory``,
/// ``EngineState/startAppending()``): their writes reach this one as another
/// device's would, and one of them, the primary, writes what only one may.
extension DeviceStore {
    /// Reads what the device's other processes wrote since this one last
    /// looked, and reports it: called when this device's own folder changes
    /// (``SyncWatcher``), at once, without reading the other devices' folders.
    func refreshOwnFolder() {
        defer { announceVisibleChanges() }
        engine.withLock { state in
            if !state.isClosed { state.readOtherProcessesWrites() }
        }
        reportOtherProcessesWrites()
    }

    /// Posts what the device's other processes wrote, as this one read it
    /// (while appending, or on a change of its folder): ServerChange, as for
    /// another device's writes, and QuotaViolationChange for keys they set aside.
    func reportOtherProcessesWrites() {
        let writes = journal.folder.withLock { $0.takeOtherProcessesWrites() }
        if !writes.changed.isEmpty { notifier.record(StoreChange(reason: .serverChange, keys: Array(writes.changed))) }
        if !writes.setAside.isEmpty { notifier.record(StoreChange(reason: .quotaViolationChange, keys: Array(writes.setAside))) }
    }

    /// Settles whether this process is the device's primary
    /// (``StateDirectory/settlePrimary(beforeLettingGo:)``), and has the
    /// change log written here exactly while it is.
    @discardableResult
    func settlePrimary() -> Bool {
        let log = notifier.changeLog
        let isPrimary = state.settlePrimary { log.setWriting(false) }
        log.setWriting(isPrimary)
        return isPrimary
    }
}
