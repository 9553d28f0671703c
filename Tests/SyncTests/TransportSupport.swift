import Foundation
import KVStore
import Synchronization
@_exported import TestSupport

/// A device of a transport test: a store with its watcher, closed in one go.
struct WatchedDevice {
    let store: DeviceStore
    let watcher: SyncWatcher

    /// Device `name` on `sync`, its state under `root`, watched through inotify (one-second polling as a
    /// backstop). In a sealed test (``Sealing/sealed``) the first device on a store seals it, and every
    /// other joins it first (``SealedStores``).
    init(_ name: String, sync: String, root: String, _ sealing: Sealing = .default) throws {
        let (syncURL, stateURL) = (URL(fileURLWithPath: sync), URL(fileURLWithPath: root + "/state-" + name))
        if sealing == .sealed { try SealedStores.admit(name, sync: syncURL, state: stateURL) }
        store = try DeviceStore(syncDirectory: syncURL, stateDirectory: stateURL, deviceName: name, warn: { _ in })
        watcher = SyncWatcher(store: store)
    }

    func close() {
        watcher.stop()
        store.close()
    }
}

/// Writes from several devices at once, as concurrent as threads make them:
/// each device sets `writes` keys of its own and fights over a few shared
/// ones, and removes one of its own. Returns once all are done.
func writeConcurrently(_ stores: [DeviceStore], writes: Int) {
    DispatchQueue.concurrentPerform(iterations: stores.count) { index in
        let store = stores[index]
        for n in 0..<writes {
            try? store.set(.integer(Int64(n)), forKey: "\(store.deviceName)-\(n)")
            try? store.set(.string("\(store.deviceName) \(n)"), forKey: "shared-\(n % 3)")
            if n % 10 == 9 { try? store.removeValue(forKey: "\(store.deviceName)-\(n - 5)") }
        }
    }
}

/// Every file under `folder` whose name says a synchronizer found a conflict.
func conflictCopies(in folder: String) -> [String] {
    let names = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
    return names.filter { $0.contains(".sync-conflict-") || $0.lowercased().contains("conflict") }
}

/// Waits until every store shows the same values, looking every `interval`
/// seconds, `step` running before each look (a sync pass, say).
func waitForEqualStores(_ stores: [DeviceStore], seconds: TimeInterval, every interval: TimeInterval = 0.01,
                        step: () throws -> Void = {}) throws {
    try waitUntil(seconds: seconds, "the stores to agree", every: interval) {
        try step()
        let values = stores.map(\.values)
        return values.allSatisfy { $0 == values[0] } && !values[0].isEmpty
    }
}

/// The sealed stores of transport tests run sealed: the first device on a
/// store seals it (as `kvfs seal` does), and the others join it with its
/// recovery key (as `kvfs join --recovery-key` does, with no member to pair
/// them), once its roster has reached their folder.
enum SealedStores {
    /// Each store's recovery key, by store id.
    private static let recoveryKeys = Mutex<[String: RecoveryKey]>([:])

    /// Makes device `name` (state directory `state`) a member of the store at `sync`, sealing it when it is not yet.
    static func admit(_ name: String, sync: URL, state: URL) throws {
        let membership = Membership(syncDirectory: sync, stateDirectory: state)
        let storeID = { (try? String(contentsOf: sync.appendingPathComponent("store-id"), encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) }
        if let id = storeID(), let key = recoveryKeys.withLock({ $0[id] }) {
            try waitUntil(seconds: 30, "the roster of \(sync.path)") { Membership.isSealed(syncDirectory: sync) }
            try membership.recover(with: key, deviceName: name)
            return
        }
        // A new store: opened once for the ids its roster names, then sealed.
        try DeviceStore(syncDirectory: sync, stateDirectory: state, deviceName: name, warn: { _ in }).close()
        let key = try membership.seal(deviceName: name).recoveryKey
        if let id = storeID() { recoveryKeys.withLock { $0[id] = key } }
    }
}
