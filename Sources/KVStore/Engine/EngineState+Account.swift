/// An account change: the sync directory now holds another store.
extension EngineState {
    /// A store id that differs from the one this device served.
    struct NewStoreID {
        /// The id now in the sync directory, for the state directory to remember.
        let storeID: String
        /// The AccountChange, unless the id merely arrived (this device waited for it, it is no other store).
        let change: StoreChange?
    }

    /// Reads the sync directory's store id. When it is another store's,
    /// this device starts over from that store's content: its journal is
    /// reopened on its folder there, and every folder read again. Nil when
    /// the id is the one this device served.
    mutating func checkStoreID() -> NewStoreID? {
        guard let id = sync.storeID(), id != folders.storeID else { return nil }
        let arrived = folders.storeID.isEmpty  // the id this device waited for, not another store
        folders.storeID = id
        if arrived { return NewStoreID(storeID: id, change: nil) }
        let before = Set(merged.visible.keys)
        merged = MergedState(owner: deviceID)
        folders.heldBack = HeldBackRecords()
        history = HistoryIndex()
        journal.ahead = OwnRecordsAhead()
        (folders.adoptions, folders.adoptedUpTo) = ([:], [:])
        let ownReader = DeviceFolderReader(device: deviceID, folder: sync.folder(of: deviceID), warn: context.warn)
        folders.readers = [deviceID: ownReader]
        let own = ownReader.readNew()
        _ = merge(own, from: deviceID)
        journal.latest = latestAdmitted(own, of: deviceID)
        do {
            try sync.setName(context.deviceName, of: deviceID)
            journal.writer = try journal.writer.reopened(on: sync.folder(of: deviceID), recoveredBy: ownReader)
        } catch {
            warn("cannot write to the new store: \(error)")
        }
        _ = readOtherDevices()
        _ = merged.takeLostWrites()  // AccountChange tells of every key: a conflict line would be no news
        let changed = noteVisibleChanges(before.union(merged.visible.keys))
        return NewStoreID(storeID: id, change: StoreChange(reason: .accountChange, keys: Array(changed)))
    }
}
