import Crypto
import Foundation
import Synchronization
@testable import KVStore

/// Seals the stores tests open, until the membership makes real keys
/// (`Sealing/Membership/`): every store opened in a sync directory passed to
/// ``seal(_:)`` (or, with `KVFS_TEST_SEALED=1` in the environment, every store the
/// test helpers open) is sealed with one store key per store id, a signing
/// key per device, and every device of the store a member, each device's
/// keys updated as others join.
enum TestSealing {
    private struct Store {
        let key = SymmetricKey(size: .bits256)
        var signers: [DeviceID: Curve25519.Signing.PrivateKey] = [:]
        var sealings: [(device: DeviceID, sealing: StoreSealing)] = []

        func keys(for device: DeviceID, storeID: String) -> SealingKeys {
            SealingKeys(storeID: storeID, currentEpoch: 1, storeKeys: [1: key], device: device,
                        signingKey: signers[device]!, members: signers.mapValues(\.publicKey))
        }
    }

    /// The stores sealed, by store id, and the sync directories asked to be.
    private static let state = Mutex<(stores: [String: Store], syncDirectories: Set<String>, plain: Set<String>)>(([:], [], []))
    /// Whether every store the helpers open is sealed: the switch that runs existing suites sealed.
    static let sealsEverything = ProcessInfo.processInfo.environment["KVFS_TEST_SEALED"] == "1"

    /// Seals the stores opened in `sync` from now on.
    static func seal(_ sync: String) {
        installed.touch()
        state.withLock { _ = $0.syncDirectories.insert(URL(fileURLWithPath: sync).standardizedFileURL.path) }
    }

    /// Leaves the device of state directory `state` plain (no keys) wherever it opens a store.
    static func keepPlain(state path: String) {
        state.withLock { _ = $0.plain.insert(URL(fileURLWithPath: path).standardizedFileURL.path) }
    }

    /// Puts the source in place when `KVFS_TEST_SEALED=1` asks for every store sealed.
    static func installIfAsked() {
        if sealsEverything { installed.touch() }
    }

    /// The keys `device` of store `storeID` has, when it is sealed.
    static func keys(of device: DeviceID, storeID: String) -> SealingKeys? {
        state.withLock { $0.stores[storeID].flatMap { $0.signers[device] == nil ? nil : $0.keys(for: device, storeID: storeID) } }
    }

    private static let installed = Installation()

    private final class Installation: Sendable {
        init() {
            StoreSealing.source.withLock { source in
                // The source in force before (the membership's, or another suite's) serves the stores not asked to be sealed.
                let previous = source ?? Membership.storeSealing
                source = { state, sync, device, storeID in
                    TestSealing.sealing(state: state, sync: sync, device: device, storeID: storeID, otherwise: previous)
                }
            }
        }

        func touch() {}
    }

    /// A store of the sync directories asked to be sealed is sealed with the test's keys; another one is
    /// what `otherwise` makes of it (the membership's: plain, or sealed by its roster, as in `kvfs seal`'s tests).
    private static func sealing(state path: String, sync: String, device: DeviceID, storeID: String,
                                otherwise: (String, String, DeviceID, String) -> StoreSealing?) -> StoreSealing? {
        let asked = state.withLock { state in
            sealsEverything || state.syncDirectories.contains(URL(fileURLWithPath: sync).standardizedFileURL.path)
        }
        guard asked else { return otherwise(path, sync, device, storeID) }
        return state.withLock { state in
            guard !state.plain.contains(URL(fileURLWithPath: path).standardizedFileURL.path) else { return nil }
            var store = state.stores[storeID] ?? Store()
            let isNew = store.signers[device] == nil
            if isNew { store.signers[device] = Curve25519.Signing.PrivateKey() }
            let sealing = StoreSealing(store.keys(for: device, storeID: storeID))
            store.sealings.append((device, sealing))
            if isNew { for other in store.sealings { other.sealing.update(store.keys(for: other.device, storeID: storeID)) } }
            state.stores[storeID] = store
            return sealing
        }
    }
}
