import Foundation
import Synchronization

/// NSUbiquitousKeyValueStore for Linux: the store a kvfs mount shows, kept in a
/// sync directory that other mounts, machines and programs share.
///
/// Each instance is one device of the store, with its own state directory
/// (which one process holds at a time). Other devices' writes arrive by
/// themselves (inotify, or polling every second) and post
/// ``didChangeExternallyNotification`` and the ``changes`` sequence; this
/// instance's own writes do not, as with Apple's store.
///
/// The InitialSyncChange of opening (the keys other devices changed while
/// this one was away) waits for the program's first ``synchronize()`` or
/// ``changes`` subscription, so it is not posted before the program could
/// register for it: register for the notification, then call `synchronize()`
/// at launch, as Apple recommends.
public final class UbiquitousKeyValueStore: KeyValueStore {
    private let device: DeviceStore
    private let broadcaster = ChangeBroadcaster()
    /// The InitialSyncChange until it may be posted (`.held`), or `.released`.
    private let initialSync = Mutex(InitialSync.waiting)
    /// Started once the observer is in place, so no change falls between the two.
    private let watcher = Mutex<SyncWatcher?>(nil)

    /// Opens (creating if needed) the store in `syncDirectory`.
    ///
    /// - Parameters:
    ///   - syncDirectory: the folder the devices share (directly, or through a file synchronizer).
    ///   - stateDirectory: this device's private folder; by default the one
    ///     `kvfs mount --sync-dir syncDirectory` uses.
    ///   - deviceName: how other devices name this one; by default the host name.
    /// - Throws: ``KVStoreError/stateDirectoryBusy(path:holder:)`` when another
    ///   process (a mount, another program) holds the state directory: pass
    ///   another `stateDirectory` to open the same store as a device of its own.
    public init(syncDirectory: URL, stateDirectory: URL? = nil, deviceName: String? = nil) throws(KVStoreError) {
        device = try DeviceStore(syncDirectory: syncDirectory, stateDirectory: stateDirectory, deviceName: deviceName,
                                 owner: "\(ProcessInfo.processInfo.processName) (Swift library)")
        // Weak: the device's queue must not keep a store alive that the program dropped.
        _ = device.addChangeObserver { [weak self] change in
            guard let self else { return }
            let hold = change.reason == .initialSyncChange && self.initialSync.withLock { state in
                guard case .waiting = state else { return false }
                state = .held(change)
                return true
            }
            if !hold { self.broadcaster.post(change, from: self) }
        }
        let device = device
        watcher.withLock { $0 = SyncWatcher(store: device) }
    }

    deinit {
        watcher.withLock { $0 }?.stop()
        device.close()
    }

    /// The default store (`$XDG_DATA_HOME/kvfs/default`, the one `kvfs mount`
    /// serves without `--sync-dir`), opened on first use.
    ///
    /// This program is a device of its own, with the state directory
    /// `$XDG_STATE_HOME/kvfs/swift-PROGRAM`, so it runs beside a mount of the
    /// same store; a second instance running at the same time takes
    /// `swift-PROGRAM-2`, and so on. Like Apple's `default` it cannot fail: if
    /// the store cannot be opened (the folder is not writable, eight instances
    /// run) the program stops with the reason; use
    /// ``init(syncDirectory:stateDirectory:deviceName:)`` to handle that instead.
    public static let `default`: UbiquitousKeyValueStore = {
        let program = ProcessInfo.processInfo.processName
        let stateFolder = DeviceStore.defaultStateDirectory(for: DeviceStore.defaultSyncDirectory).deletingLastPathComponent()
        var failure = KVStoreError.io(path: stateFolder.path, reason: "no state directory was free")
        for instance in 1...8 {
            let name = instance == 1 ? "swift-\(program)" : "swift-\(program)-\(instance)"
            do throws(KVStoreError) {
                return try UbiquitousKeyValueStore(syncDirectory: DeviceStore.defaultSyncDirectory,
                                                   stateDirectory: stateFolder.appendingPathComponent(name),
                                                   deviceName: "\(ProcessInfo.processInfo.hostName) (\(name))")
            } catch {
                failure = error
                guard case .stateDirectoryBusy = error else { break }
            }
        }
        fatalError("kvfs: cannot open the default key-value store: \(failure)")
    }()

    /// The value stored for `key`, or nil.
    public func value(forKey key: String) -> PropertyListValue? { device.value(forKey: key) }

    /// Every key and its value.
    public var values: [String: PropertyListValue] { device.values }

    /// What the store uses against its limits.
    public var usage: QuotaUsage { device.usage }

    /// Stores `value` for `key`, journaled (it survives the process being killed
    /// once this returns), or throws why not; a quota refusal also posts
    /// QuotaViolationChange and adds it to the change log.
    public func setValue(_ value: PropertyListValue, forKey key: String) throws(KVStoreError) {
        try device.set(value, forKey: key)
    }

    /// Removes `key`'s value; removing a missing key does nothing.
    public func removeValue(forKey key: String) throws(KVStoreError) {
        try device.removeValue(forKey: key)
    }

    /// Flushes this device's journal to disk and reads other devices' new
    /// writes now (their changes are posted as usual). False if the flush failed.
    @discardableResult
    public func synchronize() -> Bool {
        releaseInitialSync()
        do {
            try device.synchronize()
            return true
        } catch {
            return false
        }
    }

    /// Other devices' changes, the first sync's, account changes and quota refusals, as an async sequence.
    public var changes: AsyncStream<StoreChange> {
        let stream = broadcaster.subscribe()
        releaseInitialSync()
        return stream
    }

    private enum InitialSync {
        case waiting, held(StoreChange), released
    }

    /// Posts the held InitialSyncChange, if any; from now on it is posted as it comes.
    private func releaseInitialSync() {
        let held: StoreChange? = initialSync.withLock { state in
            defer { state = .released }
            if case let .held(change) = state { return change }
            return nil
        }
        if let held { broadcaster.post(held, from: self) }
    }
}
