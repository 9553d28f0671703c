/// A sealed store's marks: what this device appends is signed at sync points
/// rather than at each write (docs/sealed.md § Signing at sync points).
extension DeviceStore {
    /// Signs the device's unsigned appends now, in this process's turn at the
    /// journal: after reading what the device's other processes appended (as
    /// a write does), a mark goes after the folder's last record, and covers
    /// theirs as well as this process's. `waiting` for the turn (a sync point:
    /// `flush()`, close), or not (the schedule, the tick): false when another
    /// thread or process has it, to try again later. Nothing to sign, or a
    /// plain store: true at once. A mark that cannot be written (a full disk)
    /// leaves the records for the next one: the tick tries again every second.
    @discardableResult
    func signAppends(waiting: Bool) -> Bool {
        guard signing != nil, journal.folder.withLock({ $0.hasUnsignedTail }) else { return true }
        var marked = false
        defer {
            reportOtherProcessesWrites()
            announceVisibleChanges()
            // The mark is what makes the writes readable elsewhere: a mount's Syncthing scan
            // (`--syncthing`) that the write's commit asked for came before it.
            if marked { notifier.committed() }
        }
        let sign = { [self] (kept: Bool) throws(KVStoreError) in
            try engine.withLock { state throws(KVStoreError) in
                guard !state.isClosed else { return }
                if !kept { try state.followOtherProcesses() }
                marked = try state.own.withLock { folder throws(KVStoreError) in try folder.sign() }
            }
        }
        do throws(KVStoreError) {
            if waiting { try journal.take(sign) } else { return try journal.takeIfFree(sign) }
        } catch {
            // The records stay appended and acknowledged; the next sync point signs them.
        }
        return true
    }
}
