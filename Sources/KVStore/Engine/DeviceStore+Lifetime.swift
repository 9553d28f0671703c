import Foundation

/// Telling others about changes, status, and the store's lifetime.
extension DeviceStore {

    /// Calls `observer` (on a private queue) for every change that did not come
    /// from this store's own writes, and for quota refusals. The first observer
    /// also gets the InitialSyncChange of opening, if there was one.
    public func addChangeObserver(_ observer: @escaping @Sendable (StoreChange) -> Void) -> ObserverToken {
        notifier.addChangeObserver(observer)
    }

    /// Calls `observer` (on the same private queue, in order with the change
    /// observers) with the keys whose visible entry changed, whatever changed
    /// it: other devices' records, the quota rule setting keys aside or
    /// letting them back, an account change, or this store's own writes —
    /// except the keys a write stored itself, which its caller knows. A mount
    /// drops the kernel's caches of these keys.
    public func addVisibilityObserver(_ observer: @escaping @Sendable (Set<String>) -> Void) -> ObserverToken {
        notifier.addVisibilityObserver(observer)
    }

    /// Stops calling an observer (of changes or of visibility).
    public func removeChangeObserver(_ token: ObserverToken) {
        notifier.removeObserver(token)
    }

    /// Tells the visibility observers which keys changed since they were last told.
    func announceVisibleChanges() {
        notifier.announceVisible(lock.withLock {
            defer { unannouncedKeys = [] }
            return unannouncedKeys
        })
    }

    /// Calls `listener` after each write this device commits to its journal
    /// (set, remove, rename, conversion), on the writing thread, once the
    /// store's lock is released: a hook for whoever carries the device's folder
    /// to other machines (the Syncthing scan request of `kvfs mount --syncthing`).
    /// It runs inside the write call, so it must return at once: hand work to a queue.
    public func addCommitListener(_ listener: @escaping @Sendable () -> Void) -> ObserverToken {
        notifier.addCommitListener(listener)
    }

    /// Stops calling a commit listener.
    public func removeCommitListener(_ token: ObserverToken) {
        notifier.removeCommitListener(token)
    }

    /// The change log's bytes.
    public func changeLogContents() -> [UInt8] { notifier.changeLog.contents() }

    // MARK: Status and lifetime

    /// Tells other processes what holds the state directory (the mount point, once mounted).
    public func recordOwner(_ owner: String) {
        state.recordOwner(owner)
        lock.withLock { self.owner = owner }
    }

    /// Tells processes that want the state directory (`kvfs get` right after
    /// an unmount, the next mount) that this store is closing, so that they
    /// wait for it rather than fail as "in use". ``close()`` says so itself;
    /// a daemon says it as soon as it is unmounted, before its last commits.
    public func announceClosing() {
        state.recordClosing(owner: lock.withLock { owner })
    }

    /// Makes everything durable, remembers what this device has seen, and releases the state directory.
    public func close() {
        announceClosing()
        waitForCompaction()
        retryUnfinishedCompaction()
        durabilityTimer?.cancel()
        // And the timer's fsync in progress, unless this is it (the store's last reference went in a tick).
        if DispatchQueue.getSpecific(key: Self.onDurabilityQueue) == nil { durability.sync {} }
        let wasOpen = lock.withLock {
            guard !closed else { return false }
            try? writer.sync()
            state.saveSeen(visible: merged.visible.mapValues(\.stamp),
                           setAside: merged.winners.filter { merged.setAside.contains($0.key) }.mapValues(\.stamp))
            closed = true
            return true
        }
        guard wasOpen else { return }
        publishProgress(closing: true)
        noteOwnStamp()
        state.unlock()
    }

    /// Bounds how long an acknowledged write waits for fsync (one second),
    /// publishes reading progress now and then (``ProgressPublisher``: at
    /// least every half minute, so others know this device runs), notes its
    /// latest stamp, and logs what newly keeps devices from getting each
    /// other's writes: on the durability queue, the disk's writes done without the lock.
    func startDurabilityTimer() {
        durability.setSpecific(key: Self.onDurabilityQueue, value: ())
        let timer = DispatchSource.makeTimerSource(queue: durability)
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        durabilityTimer = timer
    }

    /// Marks the durability queue, so close() knows when it runs on it.
    private static let onDurabilityQueue = DispatchSpecificKey<Void>()

    private func tick() {
        retryUnfinishedCompaction()
        let (isOpen, point): (Bool, JournalWriter.SyncPoint?) = lock.withLock {
            guard !closed else { return (false, nil) }
            // An error reaches the next flush() or close() that asks.
            return (true, (try? writer.syncPoint()) ?? nil)
        }
        guard isOpen else { return }
        if let point, (try? point.perform()) != nil { lock.withLock { writer.didSync(point) } }
        logHealth()
        progress.publishIfDue { lock.withLock { readProgress() } }
        noteOwnStamp()
    }
}
