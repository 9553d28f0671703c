import Foundation
import Synchronization
@testable import KVStore

/// The sealed sandboxes open now (``Sandbox``): a store a test opens in its own process (`DeviceStore`,
/// `UbiquitousKeyValueStore`) in one of them joins as it opens, as the sandbox's `kvfs` makes every other
/// process's device join: this process's `StoreSealing.source` makes the device a member with a recovery
/// key the sandbox keeps (``Sandbox/sealingFolder``, the first device's, which sealed the store through the
/// sandbox's `kvfs`), then gives the membership's keys.
///
/// It joins a sealed store; it cannot seal one: sealing opens the store, whose state directory the store
/// opening here holds. A test whose first device of a store opens in process admits it first
/// (``Sandbox/admit(state:)``).
enum SealedSandboxes {
    /// Each sandbox's folder, and the folder where its `kvfs` keeps the recovery keys.
    private static let paths = Mutex<[String: String]>([:])

    /// The source in force before, which this one asks first (KVStoreTests' `TestSealing` may have set one).
    private static let installed: Void = {
        StoreSealing.source.withLock { source in
            let previous = source ?? Membership.storeSealing
            source = { state, sync, device, storeID in
                previous(state, sync, device, storeID) ?? joined(state: state, sync: sync, device: device, storeID: storeID)
            }
        }
    }()

    /// Makes the stores opened under the sandbox folder `path` join as they open, with a recovery key in
    /// `kept/recovery-keys`, until ``remove(_:)``.
    static func add(_ path: String, keeping kept: String) {
        _ = installed
        paths.withLock { $0[path] = kept }
    }

    static func remove(_ path: String) {
        paths.withLock { _ = $0.removeValue(forKey: path) }
    }

    /// The keys of a device that joins the sealed store at `sync`, in a sealed sandbox, with a recovery key it keeps.
    private static func joined(state: String, sync: String, device: DeviceID, storeID: String) -> StoreSealing? {
        guard let kept = paths.withLock({ $0.first { sync.hasPrefix($0.key + "/") }?.value }),
              Membership.isSealed(syncDirectory: URL(fileURLWithPath: sync)) else { return nil }
        let membership = Membership(syncDirectory: URL(fileURLWithPath: sync), stateDirectory: URL(fileURLWithPath: state))
        let keys = (try? String(contentsOfFile: kept + "/recovery-keys", encoding: .utf8)) ?? ""
        for words in keys.split(separator: "\n") {
            guard let key = try? RecoveryKey(words: String(words)), (try? membership.recover(with: key, deviceName: "joiner")) != nil else { continue }
            return Membership.storeSealing(state: state, sync: sync, device: device, storeID: storeID)
        }
        return nil
    }
}
