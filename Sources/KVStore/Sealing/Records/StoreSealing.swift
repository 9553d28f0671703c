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
    /// The roster's files that the last look refused (forged, altered, replayed): the status names them until `roster/` changes.
    private let refused: Mutex<[RosterRefusal]>
    /// How far this device has read each other device's folder, this run or before it (``ReadMark``).
    private let marks = Mutex<[DeviceID: ReadMark]>([:])
    /// The files beside the records that this device took and refused (``SignedFile``).
    let signedFiles = SignedFileLedger()

    /// How a store's keys follow its roster: `changeMark` is cheap (the roster folder's status), `keys` is
    /// not (it reads and checks the versions), so `keys` runs only when the mark moved. `keys` gives the keys
    /// (nil when the roster no longer makes this device a member) and the files it refused on the way.
    struct Renewal: Sendable {
        let changeMark: @Sendable () -> FolderSurvey.FileStamp?
        let keys: @Sendable () -> (keys: SealingKeys?, refused: [RosterRefusal])
    }

    /// Keys in force from the start, the roster's files `refused` as they were taken.
    init(_ keys: SealingKeys, refused: [RosterRefusal] = [], renewal: Renewal? = nil) {
        current = Mutex(keys)
        self.refused = Mutex(refused)
        self.renewal = renewal
        lastMark = Mutex(renewal?.changeMark())
    }

    /// The keys in force.
    var keys: SealingKeys { current.withLock { $0 } }

    /// The roster's files refused when the keys were last taken.
    var rosterRefusals: [RosterRefusal] { refused.withLock { $0 } }

    /// How far this device had read `device`'s folder, in this run or before it restarted; nil when never.
    func readMark(of device: DeviceID) -> ReadMark? { marks.withLock { $0[device] } }

    /// Takes the marks this device has reached: each one only raises the mark it had. Returns every mark
    /// when one rose (for the state directory), nil when none did.
    func raiseReadMarks(_ reached: [DeviceID: ReadMark]) -> [DeviceID: ReadMark]? {
        marks.withLock { marks in
            var rose = false
            for (device, mark) in reached where mark > ReadMark(generation: 1, offset: 0) && marks[device].map({ $0 < mark }) ?? true {
                marks[device] = mark
                rose = true
            }
            return rose ? marks : nil
        }
    }

    /// Puts `keys` in force: a new roster version's view (a member added or revoked, a new epoch).
    func update(_ keys: SealingKeys) {
        current.withLock { $0 = keys }
    }

    /// Takes the roster's keys again when the roster changed since they were last taken (each refresh asks):
    /// a member added, a device revoked, a new epoch. Keys the roster no longer gives this device (it was
    /// revoked) are kept: what it had read stays readable to it, and its new records are refused elsewhere.
    /// Returns whether it took new keys, and the roster's files refused that were not before, for the log.
    func renewIfRosterChanged() -> (renewed: Bool, refused: [RosterRefusal]) {
        guard let renewal else { return (false, []) }
        let mark = renewal.changeMark()
        let changed = lastMark.withLock { last in
            defer { last = mark }
            return last != mark
        }
        guard changed else { return (false, []) }
        let (keys, refusals) = renewal.keys()
        if let keys { update(keys) }
        let new = refused.withLock { refused in
            defer { refused = refusals }
            return refusals.filter { !refused.contains($0) }
        }
        return (keys != nil, new)
    }

    /// Where stores that open find their keys (docs/sealed.md § Converting a store): given the state
    /// directory, the sync directory, this device's id and the store id, the store's sealing, or nil
    /// for a plain store. By default the membership's (`Membership.storeSealing`): the keys of the roster
    /// this device trusts; tests may set one that seals every store they open.
    static let source = Mutex<(@Sendable (_ state: String, _ sync: String, _ device: DeviceID, _ storeID: String) -> StoreSealing?)?>(
        Membership.storeSealing)
}
