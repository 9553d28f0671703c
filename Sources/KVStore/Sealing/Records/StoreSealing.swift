import Foundation
import Synchronization

/// A sealed store's keys as the journal uses them: the device folders of a
/// sealed store share one, and each read or write takes the keys it holds
/// then (``keys``). The membership replaces them when the roster changes
/// (``update(_:)``); a plain store has none, and reads and writes exactly as
/// before sealing existed.
final class StoreSealing: Sendable {
    private let current: Mutex<SealingKeys>

    init(_ keys: SealingKeys) {
        current = Mutex(keys)
    }

    /// The keys in force.
    var keys: SealingKeys { current.withLock { $0 } }

    /// Puts `keys` in force: a new roster version's view (a member added or revoked, a new epoch).
    func update(_ keys: SealingKeys) {
        current.withLock { $0 = keys }
    }

    /// Where stores that open find their keys (docs/sealed.md § Converting a store): given the state
    /// directory, the sync directory, this device's id and the store id, the store's sealing, or nil
    /// for a plain store. Unset, every store is plain. The membership sets it (`Sealing/Membership/`);
    /// tests set one that seals every store they open.
    static let source = Mutex<(@Sendable (_ state: String, _ sync: String, _ device: DeviceID, _ storeID: String) -> StoreSealing?)?>(nil)
}
