import Foundation
import Synchronization

/// NSUbiquitousKeyValueStore for Linux: the store a kvfs mount shows, kept in a
/// sync directory that other mounts, machines and programs share.
///
/// A device is a machine, as an Apple device is: every program (and the
/// mount) of one store on this machine is one device, with one state
/// directory, and each sees the others' writes at once, as another device's
/// (ServerChange), the way Apple's processes share a store. Within one
/// program, ``default``, ``init()`` and ``init(storeIdentifier:)`` of the same
/// store are one object's device. Other devices' writes arrive by themselves
/// (inotify, or polling every second) and post
/// ``didChangeExternallyNotification`` and the ``changes`` sequence,
/// asynchronously; this program's own writes do not, as with Apple's store. A
/// write refused for quota posts QuotaViolationChange synchronously, before the
/// setter returns (as ``InMemoryKeyValueStore`` does).
///
/// The InitialSyncChange of opening (the keys other devices changed while
/// this one was away) waits for the program's first ``synchronize()`` or
/// ``changes`` subscription, so it is not posted before the program could
/// register for it: register for the notification, then call `synchronize()`
/// at launch, as Apple recommends.
public final class UbiquitousKeyValueStore: KeyValueStore {
    private let device: LibraryDevice
    private let broadcaster = ChangeBroadcaster()
    /// The InitialSyncChange until it may be posted (`.held`), or `.released`.
    private let initialSync = Mutex(InitialSync.waiting)
    /// This object's observer of the device, removed when the object goes.
    private let observer = Mutex<ObserverToken?>(nil)

    /// Opens (creating if needed) the store in `syncDirectory`.
    ///
    /// - Parameters:
    ///   - syncDirectory: the folder the devices share (directly, or through a file synchronizer).
    ///   - stateDirectory: this device's private folder; by default the one
    ///     `kvfs mount --sync-dir syncDirectory` uses, so that this program
    ///     and the mount are one device. Every process that opens the store
    ///     with one state directory is that device; another state directory
    ///     is another device.
    ///   - deviceName: how other devices name this one; by default the name it
    ///     has, or the host name for a new device.
    /// - Throws: ``KVStoreError`` when the store cannot be opened.
    public convenience init(syncDirectory: URL, stateDirectory: URL? = nil, deviceName: String? = nil) throws(KVStoreError) {
        self.init(device: try LibraryDevice(syncDirectory: syncDirectory, stateDirectory: stateDirectory, deviceName: deviceName))
    }

    /// This program's own store, as the same device as ``default``: a new object over
    /// the same values, so what one writes the other reads at once, and neither
    /// posts the other's writes (they are one device's own). Apple's `init()`;
    /// like ``default`` it stops the program if the store cannot be opened.
    public convenience init() {
        self.init(device: Self.defaultDevice)
    }

    /// The store `storeIdentifier` names in the sync root (`$XDG_DATA_HOME/kvfs/`),
    /// made if new: another app's, for tools and tests. Opened as ``default``
    /// opens this program's own, and as the same device as every other object
    /// of this process over that store (``default`` included, when it is that store).
    ///
    /// - Throws: ``InvalidStoreIdentifier`` when the text is not an
    ///   identifier; ``KVStoreError`` when the store cannot be opened.
    public convenience init(storeIdentifier: String) throws {
        self.init(device: try LibraryDevice.shared(for: try StoreIdentifier(storeIdentifier)))
    }

    private init(device: LibraryDevice) {
        self.device = device
        // Weak: the device's queue must not keep a store alive that the program dropped.
        let token = device.store.addChangeObserver { [weak self] change in
            guard let self else { return }
            let hold = change.reason == .initialSyncChange && self.initialSync.withLock { state in
                guard case .waiting = state else { return false }
                state = .held(change)
                return true
            }
            if !hold { self.broadcaster.post(change, from: self) }
        }
        observer.withLock { $0 = token }
        device.startWatching()
    }

    deinit {
        if let token = observer.withLock({ $0 }) { device.store.removeChangeObserver(token) }
    }

    /// This program's own store, as each of Apple's apps has its own: the
    /// folder ``defaultStoreIdentifier`` names in the sync root
    /// (`$XDG_DATA_HOME/kvfs/`; `kvfs mount --store ID` serves the same
    /// store), opened on first use. ``init()`` gives other objects over the same device.
    ///
    /// This program is the machine's device of that store, with the state
    /// directory a mount of it uses (`$XDG_STATE_HOME/kvfs/default` for the
    /// store `default`): it, the mount and every other program of the store on
    /// this machine are one device, and see each other's writes at once. Like
    /// Apple's `default` it cannot fail: if the store cannot be opened (the
    /// folder is not writable) the program stops with the reason; use
    /// ``init(storeIdentifier:)`` or
    /// ``init(syncDirectory:stateDirectory:deviceName:)`` to handle that instead.
    public static let `default` = UbiquitousKeyValueStore(device: defaultDevice)

    /// The identifier of the store ``default`` opens: `KVFS_STORE`, else the
    /// main bundle's identifier (an `Info.plist` beside the executable), else
    /// the executable's name; see docs/swift.md § Each app has its own store. A program
    /// whose `KVFS_STORE` or bundle identifier is no identifier stops with the reason.
    public static let defaultStoreIdentifier: StoreIdentifier = {
        do { return try AppStoreIdentifier.current() } catch { fatalError("kvfs: cannot name this program's key-value store: \(error)") }
    }()

    /// The device ``default`` and ``init()`` share, open for the rest of the program.
    private static let defaultDevice: LibraryDevice = {
        do { return try LibraryDevice.shared(for: defaultStoreIdentifier) } catch {
            fatalError("kvfs: cannot open this program's key-value store (\(defaultStoreIdentifier)): \(error)")
        }
    }()

    /// The value stored for `key`, or nil.
    public func value(forKey key: String) -> PropertyListValue? { device.store.value(forKey: StoreKey(key)) }

    /// Every key and its value.
    public var values: [StoreKey: PropertyListValue] { device.store.values }

    /// What the store uses against its limits.
    public var usage: QuotaUsage { device.store.usage }

    /// Stores `value` for `key`, journaled (it survives the process being killed
    /// once this returns), or throws why not; a quota refusal also adds
    /// QuotaViolationChange to the change log and posts it (before this
    /// returns, on the calling thread, as ``InMemoryKeyValueStore`` does).
    public func setValue(_ value: PropertyListValue, forKey key: String) throws(KVStoreError) {
        let key = StoreKey(key)
        try broadcaster.postingQuotaRefusal(of: key, by: self) { () throws(KVStoreError) in
            try device.store.set(value, forKey: key)
        }
    }

    /// Removes `key`'s value; removing a missing key does nothing.
    public func removeValue(forKey key: String) throws(KVStoreError) {
        try device.store.removeValue(forKey: StoreKey(key))
    }

    /// The versions of `key` within the store's retention, oldest first,
    /// each with its value, read from the journal that holds it.
    public func history(forKey key: String) -> [KeyVersion] {
        device.store.history(forKey: StoreKey(key)).map { version in
            var read = version
            read.value = try? device.store.value(of: version)  // nil if it went since it was listed
            return read
        }
    }

    /// Writes `version` as `key`'s new version (see ``KeyValueStore/restore(_:forKey:)``);
    /// a quota refusal is posted as ``setValue(_:forKey:)`` posts it.
    public func restore(_ version: KeyVersion, forKey key: String) throws(KVStoreError) {
        let key = StoreKey(key)
        try broadcaster.postingQuotaRefusal(of: key, by: self) { () throws(KVStoreError) in
            try device.store.restore(version, forKey: key)
        }
    }

    /// Flushes this device's journal to disk and reads other devices' new
    /// writes now (their changes are posted as usual). False if the flush failed.
    @discardableResult
    public func synchronize() -> Bool {
        releaseInitialSync()
        do {
            try device.store.synchronize()
            return true
        } catch {
            return false
        }
    }

    /// The devices that have read `key`'s current value, as far as their
    /// published progress says: this device first, then the others by name;
    /// empty when the key has no value.
    public func deliveredTo(key: String) -> [DeviceInfo] { device.store.deliveredTo(key: StoreKey(key)) }

    /// Waits until every other device that `kvfs status` counts as active
    /// has read this device's latest writes (devices publish how far they
    /// have read within a fraction of a second of reading), or `timeout`
    /// seconds have passed: true once they have, false on timeout.
    public func waitUntilDelivered(timeout: TimeInterval) async -> Bool {
        await device.store.waitUntilDelivered(timeout: .seconds(max(0, timeout))).isEmpty
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

/// A device opened for the library: the engine and the watcher that brings
/// other devices' writes, closed when the last store object over it goes.
final class LibraryDevice: Sendable {
    let store: DeviceStore
    private let watcher = Mutex<SyncWatcher?>(nil)

    init(syncDirectory: URL, stateDirectory: URL?, deviceName: String?) throws(KVStoreError) {
        store = try DeviceStore(syncDirectory: syncDirectory, stateDirectory: stateDirectory, deviceName: deviceName,
                                owner: "\(ProcessInfo.processInfo.processName) (Swift library)")
    }

    /// Starts watching the sync directory, once: after the first store object
    /// observes the device, so that no change falls between the two.
    func startWatching() {
        let store = store
        watcher.withLock { if $0 == nil { $0 = SyncWatcher(store: store) } }
    }

    deinit {
        watcher.withLock { $0 }?.stop()
        store.close()
    }
}
