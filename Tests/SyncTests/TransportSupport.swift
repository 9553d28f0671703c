import Foundation
import KVStore
@_exported import TestSupport

/// A device of a transport test: a store with its watcher, closed in one go.
struct WatchedDevice {
    let store: DeviceStore
    let watcher: SyncWatcher

    /// Device `name` on `sync`, its state under `root`, watched through inotify (one-second polling as a backstop).
    init(_ name: String, sync: String, root: String) throws {
        store = try DeviceStore(syncDirectory: URL(fileURLWithPath: sync), stateDirectory: URL(fileURLWithPath: root + "/state-" + name),
                                deviceName: name, warn: { _ in })
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
