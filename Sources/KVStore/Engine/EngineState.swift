import Foundation

/// What reads and writes of a store need, and the operations on it: the
/// merge of every device folder's records, this device's own folder
/// (``OwnFolder``, its journal's part the engine reaches), what it knows of
/// the folders (``FolderView``), and
/// their history (``HistoryIndex``). Its methods are the operations that
/// need more than one of these; what needs one alone is a method of that one.
///
/// It lives inside the store's `Mutex` (``DeviceStore``), and its methods
/// are exactly the operations that need that lock, as LevelDB marks its
/// members `GUARDED_BY(mutex_)`: nothing outside the mutex can reach it.
/// The store's other owners (``Compactor``, ``ProgressPublisher``,
/// ``HealthMonitor``, ``ChangeNotifier``) take this lock for as long as it
/// takes to copy or change what they need, and do their own work, the disk's
/// fsyncs included, without it; this state cannot reach them, so the lock
/// is never held while one of theirs is taken. The own folder's lock is
/// taken inside this one (``OwnFolder``); the journal's turn, before it
/// (``OwnJournal``), which this state cannot reach either.
struct EngineState {
    let context: StoreContext
    /// The last-writer-wins merge of the folders' records, with the quota rule on top.
    var merged: MergedState
    /// This device's own folder: its writer, the reader of what the device's other processes append, its latest stamp.
    let own: OwnFolder
    /// What this device knows of the device folders: their readers, what they say of each other.
    var folders: FolderView
    /// What history knows of the versions the folders hold (values stay in the files).
    var history = HistoryIndex()
    /// The store's retention setting as last read from the folders, and when (``retentionSetting()``).
    var retentionRead: (setting: RetentionSetting?, at: ContinuousClock.Instant)?
    /// Keys whose visible entry changed and that the visibility observers have not been told of.
    var unannouncedKeys: Set<StoreKey> = []
    /// Whether the store is closed: nothing is written any more.
    var isClosed = false
    /// In a sealed store: the stamps of this process's appends, by the epoch they were sealed under.
    var ownSealedUnder = SealedEpochs()
    /// The uses of a superseded key already logged (``noteSupersededKeys()``).
    var supersededLogged: [SupersededKeyUse] = []

    /// The state of a store being opened: this device's own folder, as
    /// its reader read it (`read`), then every other device's.
    ///
    /// - Parameter lastOwnStamp: the latest own stamp the state directory noted.
    init(context: StoreContext, own: OwnFolder, read: DeviceFolderReader.Batch, storeID: String, lastOwnStamp: HLCTimestamp?) {
        self.context = context
        self.own = own
        folders = FolderView(storeID: storeID)
        merged = MergedState(owner: context.deviceID)
        _ = merge(read, from: deviceID)
        own.latest = latestAdmitted(read, of: deviceID)
        observePublishedProgress(lastOwnStamp: lastOwnStamp)
        _ = readFolders()
    }

    var deviceID: DeviceID { context.deviceID }
    var sync: SyncDirectory { context.sync }
    var clock: HybridLogicalClock { context.clock }
    func warn(_ message: String) { context.warn(message) }

    // MARK: Writing

    /// What a write did, for what the store does once it has let go of the lock.
    struct WriteOutcome {
        /// The records appended, in order.
        var records: [JournalRecord]
        /// Keys the quota rule newly set aside.
        var displaced: Set<StoreKey>
        /// Whether the journal has grown enough to be compacted.
        var compactionDue: Bool
    }

    /// The entries writes to `keys` replace, for the caller to decide the
    /// writes from; throws once the store is closed.
    func entriesToReplace(_ keys: [StoreKey]) throws(KVStoreError) -> [KeyEntry?] {
        guard !isClosed else { throw .io(path: sync.path, reason: "the store is closed") }
        return keys.map { merged.visible[$0] }
    }

    /// The one write: checks the quota for all of `operations` together
    /// (`refusedKey` is then the key of the value it refuses), appends their
    /// records in one write(2) and merges them.
    mutating func write(_ operations: [JournalRecord.Operation], refusing refusedKey: inout StoreKey)
    throws(KVStoreError) -> WriteOutcome {
        var usage = merged.usage
        for (key, value) in operations.flatMap(\.puts) {
            refusedKey = key
            let oldSize = merged.visible[key]?.size, newSize = FileForm.size(of: value)
            try usage.checkWrite(key: key, oldSize: oldSize, newSize: newSize)
            usage = QuotaUsage(keys: usage.keys + (oldSize == nil ? 1 : 0), bytes: usage.bytes - (oldSize ?? 0) + newSize)
        }
        let records = try append(operations)
        let setAsideBefore = merged.setAside
        let changed = merged.apply(records, in: deviceID)
        // The caller knows what it wrote; the quota rule may have moved other keys.
        unannouncedKeys.formUnion(changed.subtracting(records.flatMap { $0.changes.map(\.key) }))
        return WriteOutcome(records: records, displaced: merged.setAside.subtracting(setAsideBefore), compactionDue: own.withLock { $0.writer.shouldCompact })
    }

    /// Stamps `operations` and appends them to this device's journal in one
    /// write(2): the one place where the journal grows, but for a
    /// compaction's new segment. Reached from ``write(_:refusing:)``, and
    /// from ``rewriteOwnRecordsAhead()``, which appends again records
    /// acknowledged before; both in this process's turn at the journal
    /// (``OwnJournal``), after ``followOtherProcesses()``: the clock has
    /// passed every record of the device's other processes.
    mutating func append(_ operations: [JournalRecord.Operation]) throws(KVStoreError) -> [JournalRecord] {
        var records: [JournalRecord] = []
        var written: [StoreKey: Stamp] = [:]  // the current version of a key an earlier operation of these wrote
        for operation in operations {
            let record = JournalRecord(stamp: Stamp(time: try clock.now(), device: deviceID), operation: ranked(operation),
                                       rank: rankKept(by: operation), bases: basesSeen(by: operation, after: written))
            for change in record.changes { written[change.key] = record.stamp }
            records.append(record)
        }
        let locations = try own.withLock { folder throws(KVStoreError) in try folder.append(records) }
        history.add(zip(records, locations), in: deviceID)
        if let epoch = sync.sealing?.keys.currentEpoch { for record in records { ownSealedUnder.note(epoch, record.stamp.time) } }
        return records
    }

    /// What this device has as the current version of each key `operation`
    /// changes (``WriteBase``): the key's winner, or what an earlier
    /// operation of the same append `written`.
    private func basesSeen(by operation: JournalRecord.Operation, after written: [StoreKey: Stamp]) -> [WriteBase] {
        operation.keys.map { key in (written[key] ?? merged.winners[key]?.stamp).map(WriteBase.version) ?? .nothing }
    }

    /// The quota rule's place (``JournalRecord/rank``) a write's value takes:
    /// that of the visible value it replaces (a rename's source), so that a
    /// write that fits what the store shows is admitted; nil (its own stamp,
    /// the newest) for a key that shows no value.
    private func rankKept(by operation: JournalRecord.Operation) -> Stamp? {
        switch operation {
        case let .put(key, _), let .rename(key, _, _): merged.visible[key]?.rank
        case .remove, .snapshotEnd, .batch: nil
        }
    }

    /// `operation`, a batch's values each ranked as a put of its key is (``rankKept(by:)``).
    private func ranked(_ operation: JournalRecord.Operation) -> JournalRecord.Operation {
        guard case let .batch(puts) = operation else { return operation }
        return .batch(puts: puts.map { JournalRecord.Put(key: $0.key, value: $0.value, rank: merged.visible[$0.key]?.rank) })
    }

    // MARK: Telling

    /// Keeps `keys` for the visibility observers, and returns them.
    mutating func noteVisibleChanges(_ keys: Set<StoreKey>) -> Set<StoreKey> {
        unannouncedKeys.formUnion(keys)
        return keys
    }

    /// The keys the visibility observers have not been told of, forgotten here.
    mutating func takeUnannouncedKeys() -> Set<StoreKey> {
        defer { unannouncedKeys = [] }
        return unannouncedKeys
    }

    /// A device's name: as its folder says (as the refresh last read it,
    /// and remembered), or as an adoption of it says, or its id. This
    /// device's is the one it opened with, until another of its processes renames it.
    mutating func displayName(of device: DeviceID) -> String {
        if device == deviceID { return folders.names[device] ?? context.deviceName }
        if let name = folders.names[device] ?? sync.name(of: device) {
            folders.rename(device, to: name)
            return name
        }
        return FolderView.adoptedName(of: device, in: folders.adoptions) ?? sync.rosterName(of: device) ?? device.hex
    }

    // MARK: Closing

    /// What closing leaves to do without the lock.
    struct Closing: Sendable {
        /// The fsync that makes the last writes durable.
        var syncPoint: JournalWriter.SyncPoint?
        /// What this device shows: the stamp of each visible key, and of each key set aside.
        var visible: [StoreKey: Stamp], setAside: [StoreKey: Stamp]
    }

    /// Closes the state: no write or refresh after this one. Nil when it was closed already.
    mutating func close() -> Closing? {
        guard !isClosed else { return nil }
        isClosed = true
        return Closing(syncPoint: own.withLock { (try? $0.writer.syncPoint()) ?? nil }, visible: merged.visible.mapValues(\.stamp),
                       setAside: merged.winners.filter { merged.setAside.contains($0.key) }.mapValues(\.stamp))
    }
}
