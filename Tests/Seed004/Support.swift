import Foundation
import KVStore
import Observation
import Synchronization
import Testing
import TestSupport

/// Whether observation announced a change to what `read` touched (it announces once).
final class ObservationFlag: Sendable {
    private let fired = Mutex(false)

    init(_ read: () -> Void) {
        withObservationTracking(read) { [self] in fired.withLock { $0 = true } }
    }

    var changed: Bool { fired.withLock { $0 } }
}

/// Two devices of one store, as two machines sharing a sync directory would
/// be: each a `UbiquitousKeyValueStore` with a state directory of its own.
/// `this` is the device under test; `other` writes as another device does.
final class TwoDevices: @unchecked Sendable {
    /// The folder that holds the devices' state directories (and the sync directory, unless given).
    let folder = TemporaryFolder("kvfs-seed004")
    /// The sync directory both devices share.
    let syncDirectory: URL
    private(set) var this: UbiquitousKeyValueStore!
    private(set) var other: UbiquitousKeyValueStore!
    private let heard = Mutex<Set<String>>([])
    private var token: (any NSObjectProtocol)?

    /// Opens both devices over `syncDirectory` (by default a new one in a temporary folder).
    init(syncDirectory: URL? = nil) throws {
        let sync = syncDirectory ?? folder.sub("sync")
        self.syncDirectory = sync
        this = try UbiquitousKeyValueStore(syncDirectory: sync, stateDirectory: folder.sub("this"), deviceName: "this")
        other = try UbiquitousKeyValueStore(syncDirectory: sync, stateDirectory: folder.sub("other"), deviceName: "other")
        token = NotificationCenter.default.addObserver(forName: UbiquitousKeyValueStore.didChangeExternallyNotification, object: this,
                                                       queue: nil) { [weak self] note in
            let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
            self?.heard.withLock { $0.formUnion(keys) }
        }
    }

    /// Closes both devices and removes the folder.
    func close() {
        if let token { NotificationCenter.default.removeObserver(token) }
        this = nil
        other = nil
        folder.cleanup()
    }

    /// Has `other` write one more key and waits until `this` posted it: every
    /// change `other` made before has been posted (and observers told) by then,
    /// so a test can check that an observer was not.
    func settle(sourceLocation: SourceLocation = #_sourceLocation) async {
        let sentinel = "sentinel-\(UUID().uuidString)"
        other.set(true, forKey: sentinel)
        let arrived = await poll(seconds: 20) {
            _ = this.synchronize()
            return heard.withLock { $0.contains(sentinel) }
        }
        #expect(arrived, "the other device's write did not arrive", sourceLocation: sourceLocation)
    }

    /// Waits until `other`, reading the sync directory, sees what `condition` asks: that it has read
    /// `this`'s writes before it writes over them.
    func otherSees(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
        let seen = await poll(seconds: 20) {
            _ = other.synchronize()
            return condition()
        }
        #expect(seen, "the other device did not see this device's writes", sourceLocation: sourceLocation)
    }
}

/// Runs `body` with two fresh devices, closing them after.
func withTwoDevices(_ body: (TwoDevices) async throws -> Void) async throws {
    let devices = try TwoDevices()
    defer { devices.close() }
    try await body(devices)
}

/// A `UserDefaults` suite of its own, removed after `body`.
func withDefaultsSuite(_ body: (UserDefaults) async throws -> Void) async rethrows {
    let name = "kvfs-seed004-\(UUID().uuidString)"
    let defaults = UserDefaults(suiteName: name)!
    defer { defaults.removePersistentDomain(forName: name) }
    try await body(defaults)
}

/// An in-memory store that counts `synchronize()` calls.
final class SynchronizeCounter: KeyValueStore {
    private let memory = InMemoryKeyValueStore()
    private let calls = Mutex(0)

    var count: Int { calls.withLock { $0 } }
    func value(forKey key: String) -> PropertyListValue? { memory.value(forKey: key) }
    var values: [StoreKey: PropertyListValue] { memory.values }
    func setValue(_ value: PropertyListValue, forKey key: String) throws(KVStoreError) { try memory.setValue(value, forKey: key) }
    func removeValue(forKey key: String) throws(KVStoreError) { try memory.removeValue(forKey: key) }
    var changes: AsyncStream<StoreChange> { memory.changes }
    func history(forKey key: String) -> [KeyVersion] { memory.history(forKey: key) }
    func restore(_ version: KeyVersion, forKey key: String) throws(KVStoreError) { try memory.restore(version, forKey: key) }

    func synchronize() -> Bool {
        calls.withLock { $0 += 1 }
        return true
    }
}
