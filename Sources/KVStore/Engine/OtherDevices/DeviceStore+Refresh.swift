import Foundation

/// Reading what other devices wrote.
extension DeviceStore {
    /// Reads what other devices, and this device's other processes, wrote
    /// since the last call, merges it, and reports it (change log and
    /// observers): ServerChange for the keys whose value changed,
    /// QuotaViolationChange for keys the quota rule newly sets aside,
    /// AccountChange when the sync directory now holds another store; and a
    /// conflict line in the change log for each value of this device that a
    /// concurrent write replaced. Returns the first change, if any.
    @discardableResult
    public func refresh() -> StoreChange? {
        refresh(onlyChangedFolders: false)
    }

    /// ``refresh()``, reading with `onlyChangedFolders` only the folders
    /// whose files changed since they were last read (``FolderSurvey``):
    /// what a ``SyncWatcher`` does while inotify reports the changes, on a
    /// filesystem whose files' status is current. Each folder is read under
    /// the lock for its own read only, so a refresh of thousands of folders
    /// keeps reads and writes waiting no longer than the largest folder.
    @discardableResult
    func refresh(onlyChangedFolders: Bool) -> StoreChange? {
        defer { announceVisibleChanges() }
        let (renewed, refusals) = sync.sealing?.renewIfRosterChanged() ?? (false, [])
        for refusal in refusals { context.warn(EngineState.rosterRefusalMessage(refusal, in: sync.path)) }
        if renewed {
            // A folder refused under the old keys (its device not yet a member: the roster version adding it
            // arrived after its records) is read again under the new ones, changed or not.
            engine.withLock { state in for reader in state.folders.readers.values { reader.keysChanged() } }
        }
        if stopWritingIfSealed() { return nil }  // a plain device of a sealed store: it can open none of its folders
        let storeID = sync.storeID()
        let (isOpen, switching, ownFolderGone) = engine.withLock { state in
            state.isClosed ? (false, false, false) : (true, state.isAnotherStore(storeID), !state.own.withLock { $0.writer.isInPlace })
        }
        guard isOpen else { return nil }
        // Another store re-opens the journal, in the process's turn at it; when another process keeps it, the next refresh does.
        let newStoreID = switching ? (try? journal.take { _ in engine.withLock { $0.isClosed ? nil : $0.takeStoreID(storeID) } }) ?? nil
                                   : engine.withLock { $0.takeStoreID(storeID) }
        if let newStoreID {
            state.rememberedStoreID = newStoreID.storeID
            if let change = newStoreID.change {
                rewriteOwnRecordsAhead()  // its folder in the other store was read afresh
                notifier.record(change)
                return change
            }
        }
        if ownFolderGone { writeOwnFolderAgain() }
        let setAsideBefore = engine.withLock { $0.merged.setAside }
        let read = readFolders(onlyChangedFolders: onlyChangedFolders)
        var keys = read.changed
        if !read.vanished.isEmpty { keys.formUnion(adoptVanished(read.vanished)) }
        let newlySetAside = engine.withLock { state in
            state.folders.lastSyncTime = Date()
            return state.merged.setAside.subtracting(setAsideBefore)
        }
        publishProgressPromptly(of: read.awaited)
        var changes: [StoreChange] = []
        if !keys.isEmpty { changes.append(StoreChange(reason: .serverChange, keys: Array(keys))) }
        if !newlySetAside.isEmpty { changes.append(StoreChange(reason: .quotaViolationChange, keys: Array(newlySetAside))) }
        for change in changes { notifier.record(change) }
        reportConflicts()
        return changes.first
    }

    /// Reads the device folders (``EngineState/readFolders()``), one at a
    /// time: the survey of the folders is made without the lock. Also returns
    /// the devices whose records another device's standing request waits to
    /// see read (``WaitSignal``).
    private func readFolders(onlyChangedFolders: Bool) -> (changed: Set<StoreKey>, vanished: [DeviceID], awaited: Set<DeviceID>) {
        let folders = survey.survey()
        var changed = engine.withLock { $0.releaseHeldBack() }
        for (device, seen) in folders {
            changed.formUnion(engine.withLock { $0.read(device, seen: seen, onlyIfChanged: onlyChangedFolders) })
        }
        let read = engine.withLock { $0.finishReading(present: Array(folders.keys), changed: changed) }
        return (read.changed, read.vanished, WaitSignal.awaited(in: folders, besides: deviceID, at: Date()))
    }

    /// Someone removed this device's folder (or a synchronizer carried its
    /// removal over): write it again from what this device holds, so that its
    /// records stay in the store — and the store's id with them, when the
    /// whole sync directory went, so that no device takes it for another store.
    private func writeOwnFolderAgain() {
        guard !journal.folder.withLock({ $0.writer.isDisplaced }) else { return }  // it writes nothing more
        context.warn("\(sync.folder(of: deviceID).path) vanished; writing it again")
        try? sync.restoreStoreID(storeID)
        try? sync.setName(deviceName, of: deviceID)
        compactor.compact(engine)
        publishOwnAdoptions()
        progress.forgetPublished()
    }

    /// InitialSyncChange (or AccountChange) for what changed while this device
    /// was away, and QuotaViolationChange for what the quota rule set aside meanwhile.
    func announceInitialSync() {
        let storeID = engine.withLock { state in
            state.unannouncedKeys = []  // nothing was shown before this
            return state.folders.storeID
        }
        let remembered = state.rememberedStoreID
        if !storeID.isEmpty { state.rememberedStoreID = storeID }
        if let remembered, !remembered.isEmpty, !storeID.isEmpty, remembered != storeID {
            notifier.record(StoreChange(reason: .accountChange, keys: Array(engine.withLock { $0.merged.visible.keys })))
            reportConflicts(shownAtClose: [:])  // none: this is another store
            return
        }
        let seen = state.seen() ?? ([:], [:])
        defer { reportConflicts(shownAtClose: seen.visible.merging(seen.setAside) { visible, _ in visible }) }
        let (changed, setAside) = engine.withLock { $0.changedSince(seen) }
        if !changed.isEmpty {
            let change = StoreChange(reason: .initialSyncChange, keys: changed)
            notifier.holdForFirstObserver(change)
            notifier.record(change)
        }
        if !setAside.isEmpty { notifier.record(StoreChange(reason: .quotaViolationChange, keys: setAside)) }
    }
}
