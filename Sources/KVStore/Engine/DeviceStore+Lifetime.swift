import Foundation

/// The store's lifetime: durability, the once-a-second work, and closing.
extension DeviceStore {
    /// Makes every write durable on disk and reads other devices' new records now.
    public func synchronize() throws(KVStoreError) {
        try flush()
        refresh()
    }

    /// Makes every acknowledged write durable on disk (fsync of the journal).
    /// The fsync runs without the lock; a compaction in progress is waited for.
    /// In a sealed store, the writes are signed first: a sync point.
    public func flush() throws(KVStoreError) {
        signAppends(waiting: true)
        if let point = try journal.folder.withLock({ folder throws(KVStoreError) in try folder.writer.syncPoint() }) {
            try point.perform()
            journal.folder.withLock { $0.writer.didSync(point) }
        }
        compactor.waitUntilIdle()  // its snapshot, and the segment it retires, are durable too
    }

    /// Compacts this device's journal now, whatever its size: for tests.
    func compact() {
        compactor.compact(engine)
    }

    /// Publishes how far this device has read every other one it knows, if
    /// that changed (see ``TombstoneCollection``) or a `heartbeat` is due,
    /// and whether it is `closing` (``ProgressPublisher``).
    func publishProgress(closing: Bool = false, heartbeat: Bool = false) {
        guard state.isPrimary else { return }  // one process of the device says how far it has read
        progress.publish(heartbeat: heartbeat) { engine.withLock { $0.readProgress(closing: closing) } }
    }

    /// Notes this device's latest own stamp in its state directory, if it moved:
    /// its clock starts past it even should its folder be gone.
    private func noteOwnStamp() {
        guard !isReadOnly && state.isPrimary else { return }
        progress.noteOwnStamp(journal.folder.latest) { stamp in state.lastOwnStamp = stamp }
        noteReadMarks()
    }

    /// In a sealed store, notes in the state directory how far this device has read each device's folder, its
    /// own included, when that moved (``ReadMark``): after a restart, a folder holding less is refused, and
    /// its own folder holding less stops it opening the store (it builds nothing on an older copy).
    private func noteReadMarks() {
        guard let sealing = sync.sealing else { return }
        var (storeID, reached) = engine.withLock { ($0.folders.storeID, $0.folders.readers.mapValues(\.readMark)) }
        reached[deviceID] = journal.folder.withLock { $0.reader.readMark }
        if let marks = sealing.raiseReadMarks(reached) { state.saveReadMarks(marks, storeID: storeID) }
    }

    /// Tells other processes what holds the state directory (the mount point, once mounted).
    public func recordOwner(_ owner: String) {
        state.recordOwner(owner)
    }

    /// Tells processes that want the state directory (`kvfs get` right after
    /// an unmount, the next mount) that this store is closing, so that they
    /// wait for it rather than fail as "in use". ``close()`` says so itself;
    /// a daemon says it as soon as it is unmounted, before its last commits.
    public func announceClosing() {
        state.recordClosing()
    }

    /// Makes everything durable and releases the state directory; the
    /// device's last process to close also publishes that the device stopped,
    /// and remembers what it showed.
    public func close() {
        announceClosing()
        signing?.stop()
        signAppends(waiting: true)
        journal.stopLeasing()
        compactor.drain()
        compactor.finish(engine)
        ticker.stop()
        guard let closing = engine.withLock({ $0.close() }) else { return }
        compactor.waitUntilIdle()  // one a write started before the store closed
        _ = try? closing.syncPoint?.perform()
        if (try? journal.take(withinProcess: true) { _ throws(KVStoreError) in state.isLastToClose() }) == true {
            publishProgress(closing: true)
            noteOwnStamp()
            state.saveSeen(visible: closing.visible, setAside: closing.setAside)
        }
        state.unlock()
    }

    /// Starts the once-a-second work (``tick()``).
    func startTicking() {
        ticker.start { [weak self] in self?.tick() }
        signing?.start { [weak self] in self?.signAppends(waiting: false) ?? true }
    }

    /// Bounds how long an acknowledged write waits for fsync (one second),
    /// in a sealed store signs what is left unsigned (``signAppends(waiting:)``), publishes reading progress now and then (``ProgressPublisher``: at
    /// least every half minute, so others know this device runs), notes its
    /// latest stamp, and logs what newly keeps devices from getting each
    /// other's writes (``HealthMonitor``): on the ticker's queue, the disk's
    /// work done without the lock.
    private func tick() {
        compactor.retryUnfinished(engine)
        let (isOpen, point): (Bool, JournalWriter.SyncPoint?) = engine.withLock { state in
            // An error reaches the next flush() or close() that asks.
            state.isClosed ? (false, nil) : (true, state.own.withLock { (try? $0.writer.syncPoint()) ?? nil })
        }
        guard isOpen else { return }
        signAppends(waiting: false)  // what the schedule could not sign, or another process left unsigned
        journal.releaseIfWaitedFor()
        if let point, (try? point.perform()) != nil { journal.folder.withLock { $0.writer.didSync(point) } }
        logHealth()
        if settlePrimary() { progress.publishIfDue { engine.withLock { $0.readProgress() } } }
        noteOwnStamp()
    }
}
