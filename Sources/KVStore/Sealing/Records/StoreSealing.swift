import Foundation
import Synchronization

/// A sealed store's keys as the journal uses them: the device folders of a
/// sealed store share one, and each read or write takes the keys it holds
/// then (``keys``). The membership replaces them when the roster changes
/// (``update(_:)``); a plain store has none, and reads and writes exactly as
/// before sealing existed.
final class StoreSealing: Sendable {
    private let current: Mutex<SealingKeys>
    /// Where newer keys come from (the membership's roster).
    private let renewal: Renewal?
    /// The roster's change mark when the keys were last taken.
    private let lastMark: Mutex<FolderSurvey.FileStamp?>

    /// How a store's keys follow its roster: `changeMark` is cheap (the roster folder's status), `keys` is
    /// not (it reads and checks the versions), so `keys` runs only when the mark moved.
    struct Renewal: Sendable {
        let changeMark: @Sendable () -> FolderSurvey.FileStamp?
        let keys: @Sendable () -> SealingKeys?
    }

    init(_ keys: SealingKeys, renewal: Renewal? = nil) {
        current = Mutex(keys)
        self.renewal = renewal
        lastMark = Mutex(renewal?.changeMark())
    }

    /// The keys in force.
    var keys: SealingKeys { current.withLock { $0 } }

    /// Puts `keys` in force: a new roster version's view (a member added or revoked, a new epoch).
    func update(_ keys: SealingKeys) {
        current.withLock { $0 = keys }
    }

    /// Takes the roster's keys again when the roster changed since they were last taken (each refresh asks):
    /// a member added, a device revoked, a new epoch. Keys the roster no longer gives this device (it was
    /// revoked) are kept: what it had read stays readable to it, and its new records are refused elsewhere.
    /// Returns whether it took new keys.
    @discardableResult
    func renewIfRosterChanged() -> Bool {
        guard let renewal else { return false }
        let mark = renewal.changeMark()
        let changed = lastMark.withLock { last in
            defer { last = mark }
            return last != mark
        }
        guard changed, let keys = renewal.keys() else { return false }
        update(keys)
        return true
    }

    /// Where stores that open find their keys (docs/sealed.md § Converting a store): given the state
    /// directory, the sync directory, this device's id and the store id, the store's sealing, or nil
    /// for a plain store. By default the membership's (`Membership.storeSealing`): the keys of the roster
    /// this device trusts; tests may set one that seals every store they open.
    static let source = Mutex<(@Sendable (_ state: String, _ sync: String, _ device: DeviceID, _ storeID: String) -> StoreSealing?)?>(
        Membership.storeSealing)
}
