import Foundation

/// Reading other devices' folders, and keeping this device's own in shape.
extension DeviceStore {
    /// Makes every write durable on disk and reads other devices' new records now.
    public func synchronize() throws(KVStoreError) {
        try flush()
        refresh()
    }

    /// Makes every acknowledged write durable on disk (fsync of the journal).
    /// The fsync runs without the lock; a compaction in progress is waited for.
    public func flush() throws(KVStoreError) {
        lock.lock()
        let taken = Result { () throws(KVStoreError) in try writer.syncPoint() }
        lock.unlock()
        if let point = try taken.get() {
            try point.perform()
            lock.withLock { writer.didSync(point) }
        }
        waitForCompaction()  // its snapshot, and the segment it retires, are durable too
    }

    /// Returns once no compaction is writing its snapshot.
    func waitForCompaction() {
        compactionLock.lock()
        compactionLock.unlock()
    }

    /// Reads what other devices wrote since the last call, merges it, and
    /// reports it (change log and observers): ServerChange for the keys whose
    /// value changed, QuotaViolationChange for keys the quota rule newly sets
    /// aside. Returns the first change, if any.
    @discardableResult
    public func refresh() -> StoreChange? {
        var rewroteOwnFolder = false
        let changes: [StoreChange] = lock.withLock {
            guard !closed else { return [] }
            if let account = checkAccount() { return [account] }
            rewroteOwnFolder = rewriteOwnFolderIfGone()
            let setAsideBefore = merged.setAside
            let keys = readOtherDevices()
            lastSyncTime = Date()
            var changes: [StoreChange] = []
            if !keys.isEmpty { changes.append(StoreChange(reason: .serverChange, keys: Array(keys))) }
            let newlySetAside = merged.setAside.subtracting(setAsideBefore)
            if !newlySetAside.isEmpty { changes.append(StoreChange(reason: .quotaViolationChange, keys: Array(newlySetAside))) }
            return changes
        }
        if rewroteOwnFolder { progress.forgetPublished() }
        for change in changes { notifier.record(change) }
        announceVisibleChanges()
        return changes.first
    }

    /// Reads every other device's new records; keeps what a vanished
    /// device's folder won (``adoptVanished(_:)``); applies the adoptions the
    /// folders publish. Returns the keys whose visible entry changed. Called with the lock held.
    func readOtherDevices() -> Set<String> {
        var changed = releaseHeldBack()
        let present = sync.devices()
        for device in present where device != deviceID {
            if names[device] == nil { _ = displayName(of: device) }  // remembered, should its folder go
            let reader = readers[device] ?? DeviceFolderReader(device: device, folder: sync.folder(of: device), warn: warningHandler)
            readers[device] = reader
            changed.formUnion(merge(reader.readNew(), from: device))
        }
        changed.formUnion(applyAdoptions())  // first: what another device adopted needs no keeping here
        let presentSet = Set(present)  // a lookup per reader: an array's contains made each refresh n²
        let vanished = readers.keys.filter { $0 != deviceID && !presentSet.contains($0) && sync.hasRemovedFolder(of: $0) }
        guard !vanished.isEmpty else { return changed }
        for device in vanished { changed.formUnion(adoptVanished(device)) }
        return changed.union(applyAdoptions())
    }

    /// Merges what a reader found in `device`'s folder, moving the clock
    /// past it, less what is stamped too far ahead (``admit(_:from:)``) and
    /// what that folder holds of its records that another folder adopted;
    /// returns the keys whose visible entry changed. Called with the lock held.
    func merge(_ batch: DeviceFolderReader.Batch, from device: DeviceID) -> Set<String> {
        var records = admit(batch, from: device)
        if let adopted = adoptedUpTo[device] { records.removeAll { $0.stamp.time <= adopted } }
        return noteVisibleChanges(batch.replacesAll ? merged.replace(recordsIn: device, with: records)
                                                    : merged.apply(records, in: device))
    }

    /// Keeps `keys` for the visibility observers, and returns them. Called with the lock held.
    func noteVisibleChanges(_ keys: Set<String>) -> Set<String> {
        unannouncedKeys.formUnion(keys)
        return keys
    }

    /// A different store id in the sync directory: start over from its content. Called with the lock held.
    private func checkAccount() -> StoreChange? {
        guard let id = sync.storeID(), id != storeIDValue else { return nil }
        let arrived = storeIDValue.isEmpty  // the id this device waited for, not another store
        storeIDValue = id
        state.rememberedStoreID = id
        if arrived { return nil }
        let before = Set(merged.visible.keys)
        merged = MergedState()
        heldBack = HeldBackRecords()
        (adoptions, adoptedUpTo) = ([:], [:])
        let ownReader = DeviceFolderReader(device: deviceID, folder: sync.folder(of: deviceID), warn: warningHandler)
        readers = [deviceID: ownReader]
        let own = ownReader.readNew()
        _ = merge(own, from: deviceID)
        ownLatest = own.latest
        do {
            try sync.setName(deviceName, of: deviceID)
            writer = try writer.reopened(on: sync.folder(of: deviceID), recoveredBy: ownReader)
        } catch {
            warningHandler("cannot write to the new store: \(error)")
        }
        _ = readOtherDevices()
        let changed = noteVisibleChanges(before.union(merged.visible.keys))
        return StoreChange(reason: .accountChange, keys: Array(changed))
    }

    /// InitialSyncChange (or AccountChange) for what changed while this device
    /// was away, and QuotaViolationChange for what the quota rule set aside meanwhile.
    func announceInitialSync() {
        lock.withLock { unannouncedKeys = [] }  // nothing was shown before this
        let remembered = state.rememberedStoreID
        if !storeIDValue.isEmpty { state.rememberedStoreID = storeIDValue }
        if let remembered, !remembered.isEmpty, !storeIDValue.isEmpty, remembered != storeIDValue {
            notifier.record(StoreChange(reason: .accountChange, keys: Array(lock.withLock { merged.visible.keys })))
            return
        }
        let seen = state.seen() ?? ([:], [:])
        let (changed, setAside): ([String], [String]) = lock.withLock {
            lastSyncTime = Date()
            // What this device showed when it closed, against what it shows now; its own writes are not news to it.
            let shown = Set(seen.visible.keys).union(merged.visible.keys)
            let changed = shown.filter { key in
                let entry = merged.visible[key]
                return entry?.stamp != seen.visible[key] && entry?.stamp.device != deviceID
            }
            return (Array(changed), merged.setAside.filter { merged.winners[$0]?.stamp != seen.setAside[$0] })
        }
        if !changed.isEmpty {
            let change = StoreChange(reason: .initialSyncChange, keys: changed)
            notifier.holdForFirstObserver(change)
            notifier.record(change)
        }
        if !setAside.isEmpty { notifier.record(StoreChange(reason: .quotaViolationChange, keys: setAside)) }
    }

    // MARK: This device's folder

    /// Compacts this device's journal now, the snapshot included, all with
    /// the lock held: for a folder that must be whole again at once, and tests.
    func compact() { _ = compact(adopting: [], heldBack: []) }

    /// ``compact()``, adding `adopted` (records of a retired or vanished
    /// device) to the snapshot, and `waiting` (adopted records stamped too
    /// far ahead to merge yet, as are those of this folder held back
    /// already); returns the snapshot's stamp, or nil when it could not be
    /// written (or a compaction is under way). Called with the lock held.
    func compact(adopting adopted: [JournalRecord], heldBack waiting: [JournalRecord]) -> HLCTimestamp? {
        guard let compaction = beginCompaction(adopting: adopted, heldBack: waiting) else { return nil }
        let stamp = ownLatest
        let failure = finish(compaction)
        settle(compaction, failure: failure)
        return failure == nil ? stamp : nil
    }

    /// Starts compacting this device's journal into a snapshot of the records
    /// its folder holds that still win, less the tombstones
    /// ``TombstoneCollection`` lets go (plus `adopted` and `waiting`, as
    /// ``compact(adopting:heldBack:)`` says); returns the part to do without
    /// the lock (``finish(_:)``, by the same thread), or nil if it could not
    /// start. Called with the lock held.
    ///
    /// - Parameter unfinished: a compaction whose snapshot could not be
    ///   written, which this one replaces in place (``JournalWriter/resnapshot(_:stamp:replacing:)``).
    func startCompaction(adopting adopted: [JournalRecord] = [], heldBack waiting: [JournalRecord] = [],
                         replacing unfinished: JournalWriter.Compaction? = nil) -> JournalWriter.Compaction? {
        let current = merged.records(inFolder: deviceID)
        let tombstones = current.compactMap { record -> (key: String, readFrom: HLCTimestamp)? in
            guard case let .remove(key) = record.operation else { return nil }
            if record.stamp.device == deviceID { return (key, record.stamp.time) }
            return (adoptions[deviceID]?[record.stamp.device]?.at).map { (key, $0) }  // an adopted one
        }
        // Every device known, a vanished one's included (its folder may come back), but a retired one.
        let peers = knownDevices.filter { !isRetired($0) }.map { device in
            TombstoneCollection.Peer(progress: sync.progress(of: device), readUpTo: mergedUpTo(device),
                                     newest: merged.folders[device] ?? [:])
        }
        let collectable = TombstoneCollection.collectable(tombstones, of: deviceID, peers: peers)
        let kept = current.filter { record in
            if case let .remove(key) = record.operation { return !collectable.contains(key) }
            return true
        } + adopted
        do {
            let stamp = Stamp(time: try clock.now(), device: deviceID)
            let records = kept + heldBack.records(of: deviceID) + waiting
            let compaction = try unfinished.map { unfinished throws(KVStoreError) in
                try writer.resnapshot(records, stamp: stamp, replacing: unfinished)
            } ?? writer.beginCompaction(records, stamp: stamp)
            ownLatest = stamp.time
            _ = noteVisibleChanges(merged.replace(recordsIn: deviceID, with: kept))
            compactionInFlight = true
            compactionLock.lock()
            return compaction
        } catch {
            warningHandler("compaction failed, the journal keeps growing: \(error)")
            return nil
        }
    }

    /// Writes a compaction's snapshot and removes the files it replaces, on
    /// the thread that started it (``compactionLock`` held, and let go here);
    /// the caller then ``settle(_:failure:)``s it. Returns why it failed, or nil.
    func finish(_ compaction: JournalWriter.Compaction) -> KVStoreError? {
        defer { compactionLock.unlock() }
        do throws(KVStoreError) {
            try compaction.finish()
            return nil
        } catch {
            return error
        }
    }

    /// After ``finish(_:)``: done, or kept as ``unfinishedCompaction`` to be
    /// tried again (said once until one succeeds). Called with the lock held.
    func settle(_ compaction: JournalWriter.Compaction, failure: KVStoreError?) {
        guard let failure else {
            unfinishedCompaction = nil
            compactionInFlight = false
            compactionFailureSaid = false
            return
        }
        if !compactionFailureSaid {
            warningHandler("compacting the journal could not write its snapshot (\(failure)); this device's writes since reach other devices once it can, and kvfs tries again every second")
            compactionFailureSaid = true
        }
        unfinishedCompaction = compaction
    }

    /// ``finish(_:)`` without the lock, then ``settle(_:failure:)`` with it.
    func finishWithoutLock(_ compaction: JournalWriter.Compaction) {
        let failure = finish(compaction)
        lock.withLock { settle(compaction, failure: failure) }
    }

    /// Tries an ``unfinishedCompaction`` again, without the lock.
    func retryUnfinishedCompaction() {
        let compaction: JournalWriter.Compaction? = lock.withLock {
            unfinishedCompaction == nil ? nil : beginCompaction(adopting: [], heldBack: [])
        }
        compaction.map(finishWithoutLock)
    }

    /// Starts a compaction unless one is being written: in place of an
    /// ``unfinishedCompaction``, with a snapshot of what the store holds now
    /// (removals since make it smaller), else a new one. Called with the lock held.
    private func beginCompaction(adopting adopted: [JournalRecord], heldBack waiting: [JournalRecord]) -> JournalWriter.Compaction? {
        let unfinished = unfinishedCompaction
        guard !compactionInFlight || unfinished != nil else { return nil }
        compactionInFlight = false
        guard let compaction = startCompaction(adopting: adopted, heldBack: waiting, replacing: unfinished) else {
            compactionInFlight = unfinished != nil
            return nil
        }
        unfinishedCompaction = nil
        return compaction
    }

    /// Someone removed this device's folder (or a synchronizer carried its
    /// removal over): write it again from what this device holds, so that its
    /// records stay in the store — and the store's id with them, when the
    /// whole sync directory went, so that no device takes it for another store.
    /// Called with the lock held.
    /// Returns whether it did, so that the progress file is written again too.
    private func rewriteOwnFolderIfGone() -> Bool {
        guard !writer.isInPlace else { return false }
        warningHandler("\(writer.folder.path) vanished; writing it again")
        try? sync.restoreStoreID(storeIDValue)
        try? sync.setName(deviceName, of: deviceID)
        compact()
        publishOwnAdoptions()
        return true
    }

    /// Takes up what this device noted of itself in its state directory, and
    /// what it said when it last published its progress. Its clock moves past
    /// everything it wrote (records adopted from it, should its folder have
    /// vanished, are ignored in its folder up to where they were read, so its
    /// next writes must come after them) and everything it had read: other devices may have
    /// dropped tombstones on the strength of it (``TombstoneCollection``), so
    /// its next writes must come after them even if the folders it read are
    /// gone or not here yet. And it still knows the devices it had read
    /// whose folders are not here now (``remembered``). Called with the lock held.
    func observePublishedProgress() {
        if let stamp = state.lastOwnStamp { clock.observeOwn(stamp) }  // its folder may be gone, and adopted by others
        guard let progress = sync.progress(of: deviceID) else { return }
        for time in progress.read.values { clock.observe(time) }
        remembered = progress.read.filter { $0.key != deviceID }
    }

    /// Publishes how far this device has read every other one it knows, if
    /// that changed (see ``TombstoneCollection``) or a `heartbeat` is due,
    /// and whether it is `closing` (``ProgressPublisher``).
    func publishProgress(closing: Bool = false, heartbeat: Bool = false) {
        progress.publish(heartbeat: heartbeat) { lock.withLock { readProgress(closing: closing) } }
    }

    /// How far this device has read every other one it knows, as its
    /// progress file says it; nil when it publishes nothing (opened
    /// read-only, or another process took its folder). Called with the lock held.
    func readProgress(closing: Bool = false) -> ReadProgress? {
        guard !isReadOnly && !writer.isDisplaced else { return nil }
        var read = remembered.filter { readers[$0.key] == nil && !isRetired($0.key) }
        for device in readers.keys where device != deviceID { read[device] = mergedUpTo(device) ?? ReadProgress.nothing }
        return ReadProgress(own: ownLatest, read: read, closed: closing)
    }

    /// Notes this device's latest own stamp in its state directory, if it
    /// moved (``observePublishedProgress()``).
    func noteOwnStamp() {
        progress.noteOwnStamp(lock.withLock { isReadOnly ? nil : ownLatest }) { state.lastOwnStamp = $0 }
    }
}
