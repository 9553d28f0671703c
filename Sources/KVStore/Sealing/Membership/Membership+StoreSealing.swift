import Foundation
import SystemPackage

extension Membership {
    /// The journal's sealing for a device opening the store at `sync` (`StoreSealing.source`): nil for a
    /// plain store, and for a sealed one whose roster does not make this device a member (the store then
    /// refuses to open for writing: docs/sealed.md § Converting a store). The keys follow the roster as it
    /// changes: each refresh looks at `roster/`'s status and, when it moved, takes the keys again.
    @Sendable static func storeSealing(state: String, sync: String, device: DeviceID, storeID: String) -> StoreSealing? {
        let syncURL = URL(fileURLWithPath: sync)
        guard isSealed(syncDirectory: syncURL) else { return nil }
        let membership = Membership(syncDirectory: syncURL, stateDirectory: URL(fileURLWithPath: state))
        guard let keys = try? membership.keys(device: device) else { return nil }
        let rosterPath = syncURL.appendingPathComponent(RosterFolder.name).path
        return StoreSealing(keys, renewal: StoreSealing.Renewal(
            changeMark: { rosterMark(rosterPath) },
            keys: { try? membership.keys(device: device) }))
    }

    /// The roster folder's status as one string: a version added or removed changes its mtime and ctime.
    private static func rosterMark(_ path: String) -> String? {
        guard let status = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return "\(status[.modificationDate] ?? "")|\(status[.systemFileNumber] ?? "")"
    }
}
