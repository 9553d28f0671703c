import Foundation

extension Membership {
    /// The journal's sealing for a device opening the store at `sync` (`StoreSealing.source`): nil for a
    /// plain store, and for a sealed one whose roster does not make this device a member (the store then
    /// refuses to open for writing: docs/sealed.md § Converting a store). The keys follow the roster as it
    /// changes: each refresh looks at `roster/`'s status and, when it moved, takes the keys again.
    ///
    /// A device that has pinned a roster version keeps to it when `roster/` is gone (a writer of the folder
    /// deleted it, or the sync directory was made again): the store stays sealed for it, with the keys of
    /// the version it pinned, and is never taken for a plain one, which would write values in the clear and
    /// take plain records from anyone.
    @Sendable static func storeSealing(state: String, sync: String, device: DeviceID, storeID: String) -> StoreSealing? {
        let membership = Membership(syncDirectory: URL(fileURLWithPath: sync), stateDirectory: URL(fileURLWithPath: state))
        guard membership.storeIsSealed else { return nil }
        guard let (keys, refused) = try? membership.keysAndRefusals(device: device) else { return nil }
        let directory = SyncDirectory(path: sync)
        // A version added or removed changes the folder's times (FolderSurvey's stamp: nanoseconds, and the ctime).
        return StoreSealing(keys, refused: refused, renewal: StoreSealing.Renewal(
            changeMark: { ((try? directory.rootFolder()) ?? nil)?.entry(RosterFolder.name).map(FolderSurvey.FileStamp.init) },
            keys: {
                do throws(MembershipError) {
                    let (keys, refused) = try membership.keysAndRefusals(device: device)
                    return (keys, refused)
                } catch {
                    return (nil, (try? membership.refresh().refused) ?? [])
                }
            }))
    }
}
