/// This device's own records stamped too far ahead of its clock (``OwnRecordsAhead``).
extension DeviceStore {
    /// Rewrites, stamped now, this device's own records stamped past its
    /// clock's horizon (``EngineState/rewriteOwnRecordsAhead()``), then
    /// compacts, so that its folder keeps none of the old stamps, and says
    /// so in the log. A store opened read-only leaves them as they are: its
    /// status says what to do.
    func rewriteOwnRecordsAhead() {
        guard !isReadOnly else { return }
        let rewritten: [JournalRecord]?
        do {
            rewritten = try journal.take { kept throws(KVStoreError) -> [JournalRecord]? in
                try engine.withLock { state throws(KVStoreError) -> [JournalRecord]? in
                    guard state.own.withLock({ $0.ahead.isDue }) else { return nil }
                    if !kept { try state.followOtherProcesses() }
                    return try state.rewriteOwnRecordsAhead()
                }
            }
        } catch {
            context.warn("cannot rewrite this device's records stamped too far ahead of its clock (\(error)); it tries again at its next start")
            return
        }
        guard let rewritten else { return }
        compactor.compact(engine)
        for record in rewritten { notifier.appended(record) }
        if !rewritten.isEmpty { notifier.committed() }
        reportOtherProcessesWrites()
        announceVisibleChanges()
        let warning = journal.folder.withLock { $0.aheadWarning(device: deviceID) }
        if let warning { context.warn("\(warning.message); \(warning.fix)") }
    }
}
