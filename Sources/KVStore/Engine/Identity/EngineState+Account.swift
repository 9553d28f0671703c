/// An account change: the sync directory now holds another store.
extension EngineState {
    /// Whether `id`, the sync directory's store id as just read, is another
    /// store's than the one this device served (not the one it waited for):
    /// taking it re-opens the journal (``takeStoreID(_:)``).
    func isAnotherStore(_ id: String?) -> Bool {
        guard let id else { return false }
        return !folders.storeID.isEmpty && id != folders.storeID
    }

    /// A store id that differs from the one this device served.
    struct NewStoreID {
        /// The id now in the sync directory, for the state directory to remember.
        let storeID: String
        /// The AccountChange, unless the id merely arrived (this device waited for it, it is no other store).
        let change: StoreChange?
    }

    /// Takes `id`, the sync directory's store id as just read. When it is
    /// another store's, this device starts over from that store's content:
    /// its journal is reopened on its folder there, and every folder read
    /// again; that is done in the process's turn at the journal
    /// (``OwnJournal``), as any write is: the reader finds the folder's last
    /// whole record, and the writer cuts what follows it, which must not be
    /// the record another process of the device is appending. Nil when the
    /// id is the one this device served.
    mutating func takeStoreID(_ id: String?) -> NewStoreID? {
        guard let id, id != folders.storeID else { return nil }
        let arrived = folders.storeID.isEmpty  // the id this device waited for, not another store
        folders.storeID = id
        if arrived { return NewStoreID(storeID: id, change: nil) }
        let before = Set(merged.visible.keys)
        merged = MergedState(owner: deviceID)
        folders.heldBack = HeldBackRecords()
        history = HistoryIndex()
        (folders.adoptions, folders.adoptedUpTo) = ([:], [:])
        folders.readers = [:]
        let (device, folder, warn) = (deviceID, sync.folder(of: deviceID), context.warn)
        let read = own.withLock { own in
            own.ahead = OwnRecordsAhead()
            own.reader = DeviceFolderReader(device: device, folder: folder, ownFolder: true, warn: warn)
            return own.reader.readNew()  // as at open: to the end, for the writer to append after its last whole record
        }
        _ = merge(read, from: deviceID)
        own.latest = latestAdmitted(read, of: deviceID)
        do {
            try sync.setName(context.deviceName, of: deviceID)
            try own.withLock { own throws(KVStoreError) in own.writer = try own.writer.reopened(on: folder, recoveredBy: own.reader) }
        } catch {
            warn("cannot write to the new store: \(error)")
        }
        _ = readFolders()
        _ = merged.takeLostWrites()  // AccountChange tells of every key: a conflict line would be no news
        let changed = noteVisibleChanges(before.union(merged.visible.keys))
        return NewStoreID(storeID: id, change: StoreChange(reason: .accountChange, keys: Array(changed)))
    }
}
