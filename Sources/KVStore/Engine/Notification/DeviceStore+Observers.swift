/// Who hears of the store's changes (``ChangeNotifier``).
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
    public func addVisibilityObserver(_ observer: @escaping @Sendable (Set<StoreKey>) -> Void) -> ObserverToken {
        notifier.addVisibilityObserver(observer)
    }

    /// Stops calling an observer (of changes or of visibility).
    public func removeChangeObserver(_ token: ObserverToken) {
        notifier.removeObserver(token)
    }

    /// Tells the visibility observers which keys changed since they were last told.
    func announceVisibleChanges() {
        notifier.announceVisible(engine.withLock { $0.takeUnannouncedKeys() })
    }

    /// Calls `listener` once what this device wrote can be read elsewhere:
    /// after each write it commits to its journal (set, remove, rename,
    /// conversion), on the writing thread; in a sealed store, after each mark
    /// that signs writes instead (on the thread that signs: docs/sealed.md
    /// § Signing at sync points). Called once the store's lock is released: a
    /// hook for whoever carries the device's folder to other machines (the
    /// Syncthing scan request of `kvfs mount --syncthing`).
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

    /// The size past which the change log is cut back to its newest half.
    public var changeLogCapacity: Int { notifier.changeLog.capacity }
}
