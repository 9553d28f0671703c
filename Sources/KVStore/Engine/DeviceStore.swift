import Foundation
import Logging
import Synchronization

/// Where the store's warnings go.
private let storeLogger = Logger(label: "kvfs.store")

/// One device's view of a store kept in a sync directory: the engine under the
/// mount, the command line and the library.
///
/// Reads come from memory: the last-writer-wins merge of the records in every
/// device's folder, with the quota rule on top (`MergedState`). Writes are
/// checked against the quota, stamped by the hybrid logical clock, appended
/// to this device's journal (so they survive the process being killed once
/// the call returns), and merged. Other devices' records are read by
/// ``refresh()``, which ``SyncWatcher`` calls when the sync directory
/// changes. The journal is compacted into a snapshot when it grows, dropping
/// what `TombstoneCollection` allows, and how far this device has read the
/// others is published in its folder (`ReadProgress`) for theirs.
///
/// Its state has owners, each with a lock of its own: what reads and writes
/// need is an `EngineState` inside a `Mutex`, whose methods are the
/// operations that need it; around it, the `Compactor`, the
/// `ProgressPublisher`, the `HealthMonitor` and the `ChangeNotifier`
/// take that lock only to copy or change what they need, and do the disk's
/// work, and call observers, without it.
public final class DeviceStore: Sendable {
    /// The shared folder.
    public let syncDirectory: URL
    /// This device's private folder.
    public let stateDirectory: URL
    /// This device's id.
    public var deviceID: DeviceID { context.deviceID }
    /// This device's name, as other devices show it.
    public var deviceName: String { context.deviceName }
    /// Whether the store was opened only to be read: then nothing in the sync
    /// directory or the state directory is created or written.
    public var isReadOnly: Bool { context.isReadOnly }
    /// The path of the change log.
    public var changeLogPath: String { notifier.changeLog.path }

    // Shared with the extensions in DeviceStore+*.swift.
    let context: StoreContext
    /// This device's private folder: its lock, and what it notes of itself.
    let state: StateDirectory
    /// This device's own journal: its turn (`journal.lock`), taken before `engine`'s lock, by writes,
    /// never by reads; and its folder (writer, reader of the device's other processes), taken inside it.
    let journal: OwnJournal
    /// What reads and writes need.
    let engine: Mutex<EngineState>
    /// Compacts the journal; only a compaction's first step takes `engine`'s lock.
    let compactor: Compactor
    /// What this device says of how far it has read the others, of what it adopted, and of its latest stamp.
    let progress: ProgressPublisher
    /// What this device asks of the others while someone on it waits for delivery (`waiting.json`).
    let waits: WaitAnnouncer
    /// The change log and everyone listening to the store.
    let notifier: ChangeNotifier
    /// What the log says of other devices' health.
    let health: HealthMonitor
    /// What the device folders show on disk, looked at without `engine`'s lock (for the refresh and the status).
    let survey: FolderSurvey
    /// The once-a-second fsync, progress and health check.
    let ticker: Ticker
    /// In a sealed store, when this process signs its appends (nil in a plain one, or read-only).
    let signing: SigningSchedule?

    var sync: SyncDirectory { context.sync }

    /// The default sync directory: `$XDG_DATA_HOME/kvfs/default`.
    public static var defaultSyncDirectory: URL {
        xdg("XDG_DATA_HOME", fallback: ".local/share").appendingPathComponent("kvfs/default")
    }

    /// The state directory a sync directory gets when none is named:
    /// `$XDG_STATE_HOME/kvfs/default` for the default store, else one named after the folder.
    public static func defaultStateDirectory(for syncDirectory: URL) -> URL {
        let base = xdg("XDG_STATE_HOME", fallback: ".local/state").appendingPathComponent("kvfs")
        let path = syncDirectory.standardizedFileURL.path
        if path == defaultSyncDirectory.standardizedFileURL.path { return base.appendingPathComponent("default") }
        let hash = CRC32C.checksum(Array(path.utf8))
        return base.appendingPathComponent(syncDirectory.lastPathComponent + "-" + String(hash, radix: 16))
    }

    private static func xdg(_ variable: String, fallback: String) -> URL {
        if let value = ProcessInfo.processInfo.environment[variable], value.hasPrefix("/") {
            return URL(fileURLWithPath: value)
        }
        // $HOME first, as the XDG spec says (NSHomeDirectory reads the password database).
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(fallback)
    }

    /// Opens (creating if needed) the store in `syncDirectory` as this device:
    /// the state directory's, which every process that opens the store with
    /// it shares (`StateDirectory`).
    ///
    /// - Parameters:
    ///   - syncDirectory: the store's folder, which every device of the store shares.
    ///   - stateDirectory: this device's folder; by default one under `$XDG_STATE_HOME/kvfs/`.
    ///   - deviceName: how other devices name this one; by default the name it
    ///     has, or the host name for a new device. Only a name given here renames a device.
    ///   - owner: what this process is, for other processes: `mount <mount point>`
    ///     for a mount, one per state directory, whose lock file says so.
    ///   - readOnly: open only to read (`kvfs get`, `ls`, `status`): nothing is
    ///     created or written, so a read-only sync directory serves; writes
    ///     throw. A reader takes no lock, but throws as a second mount would
    ///     while a mount holds the state directory (the command line then goes through it).
    ///   - clock: the clock that stamps writes (tests give a skewed one).
    ///   - warn: where warnings about foreign or corrupt files go (standard error by default).
    /// - Throws: ``KVStoreError/stateDirectoryBusy(path:holder:)`` when a mount holds the
    ///   state directory and this is a mount too, or a reader.
    public convenience init(syncDirectory: URL, stateDirectory: URL? = nil, deviceName: String? = nil,
                            owner: String = "", readOnly: Bool = false, clock: HybridLogicalClock = HybridLogicalClock(),
                            warn: @escaping @Sendable (String) -> Void = DeviceStore.printWarning) throws(KVStoreError) {
        try self.init(syncDirectory: syncDirectory, stateDirectory: stateDirectory, deviceName: deviceName, owner: owner,
                      readOnly: readOnly, clock: clock, warn: warn, journalFiles: DiskJournalFiles())
    }

    /// Opens the store as the public initializer does, with the journal's
    /// segments opened by `journalFiles` (tests put in files that fail as a
    /// disk does), and its background work run on `lanes` (the simulation
    /// runs it when its seed says: ``BackgroundLane``).
    init(syncDirectory: URL, stateDirectory: URL?, deviceName: String?, owner: String = "", readOnly: Bool = false,
         clock: HybridLogicalClock, warn: @escaping @Sendable (String) -> Void, journalFiles: any JournalFileOpener,
         lanes: any BackgroundLanes = DispatchLanes()) throws(KVStoreError) {
        self.syncDirectory = syncDirectory.standardizedFileURL
        self.stateDirectory = (stateDirectory ?? Self.defaultStateDirectory(for: syncDirectory)).standardizedFileURL
        let state = try StateDirectory(path: self.stateDirectory.path, readOnly: readOnly)
        let session = readOnly ? nil : try state.join(owner: owner)
        if readOnly { try state.checkNotMounted() }
        let sync = SyncDirectory(path: self.syncDirectory.path, isWritable: !readOnly)
        // Who this device is, and what its folder holds, are settled under the journal's lock: another
        // process opening the store at once must find the same id (a copy's new one included), and the
        // writer may cut a torn tail only while nobody appends.
        let open = { () throws(KVStoreError) -> Opening in
            let claim = WriterClaim(statePath: state.path, stateInode: state.inode, nonce: session ?? "")
            // A sealed store's folders seal and check their records with its keys (docs/sealed.md), and its
            // signed files too (docs/sealed.md § Signed files): so the keys come before who this device is,
            // which its folder's writer claim and the others' adoptions say.
            let sealingSource = StoreSealing.source.withLock { $0 }
            let stateID = try state.deviceID()
            let stateStoreID = try sync.createStoreIfNeeded(for: stateID)
            let stateSealing = sealingSource?(state.path, sync.path, stateID, stateStoreID)
            // A signed file replayed while this device was away is refused, and the copy it took before stands.
            stateSealing?.signedFiles.restore(state.signedFiles, storeID: stateStoreID, keep: { state.signedFiles = $0 }, warn: warn)
            if stateSealing != nil, !readOnly, state.sealedStoreID != stateStoreID {
                // Sealed since this device last wrote: the files it wrote plain are its own, not a writer's without keys.
                try sync.sealed(by: stateSealing).folder(of: stateID).signPlainFiles()
            }
            let identity = try Self.ownIdentity(state: state, sync: sync.sealed(by: stateSealing))
            let deviceID = identity.id
            let storeID = deviceID == stateID ? stateStoreID : try sync.createStoreIfNeeded(for: deviceID)
            let sealing = deviceID == stateID ? stateSealing : sealingSource?(state.path, sync.path, deviceID, storeID)
            let membership = Membership(syncDirectory: URL(fileURLWithPath: sync.path), stateDirectory: URL(fileURLWithPath: state.path))
            // A copy of a member's state directory is a new device, which must pair: it never reads or writes with the original's keys.
            if sealing == nil || identity.copyOf != nil, membership.storeIsSealed || sync.sealedFolder(other: deviceID) != nil {
                throw membership.refusal(device: deviceID, copyOf: identity.copyOf)
            }
            identity.note.map(warn)
            for refusal in sealing?.rosterRefusals ?? [] { warn(EngineState.rosterRefusalMessage(refusal, in: sync.path)) }
            _ = sealing?.raiseReadMarks(state.readMarks(storeID: storeID))  // a folder rolled back while this device was away is refused
            let sync = sync.sealed(by: sealing)
            if sealing != nil, !readOnly, state.sealedStoreID != storeID {
                // Sealed since this device last wrote (kvfs seal, or it joined): its plain records are sealed first, this once.
                if sync.holdsPlainRecords(of: deviceID) {
                    let count = try JournalWriter.sealPlainRecords(of: sync.folder(of: deviceID), device: deviceID, claim: claim,
                                                                   files: journalFiles, clock: clock, warn: warn)
                    warn("\(sync.folder(of: deviceID).path): the store is sealed; this device's \(count) plain records were sealed by a compaction, and its plain files removed")
                }
                state.sealedStoreID = storeID
            }
            let context = StoreContext(deviceID: deviceID, deviceName: try Self.settleName(deviceName, of: deviceID, in: sync),
                                       sync: sync, clock: clock, warn: warn, isReadOnly: readOnly)
            // The own folder is read before the writer opens it: the reader finds where its whole records end.
            let ownReader = DeviceFolderReader(device: deviceID, folder: sync.folder(of: deviceID), ownFolder: true, warn: warn)
            let own = ownReader.readNew()
            if let wentBack = ownReader.wentBackWhileAway { throw Self.ownFolderWentBack(wentBack, folder: sync.folder(of: deviceID).path, state: state.path) }
            let refused = ownReader.problems.filter { $0.kind == .refused }  // the writer cuts it off: the status keeps it
            let writer = readOnly ? JournalWriter(refusingWritesTo: sync.folder(of: deviceID))
                : try JournalWriter(folder: sync.folder(of: deviceID), recoveredBy: ownReader, claim: claim, files: journalFiles)
            return Opening(context: context, storeID: storeID, ownReader: ownReader, own: own, writer: writer, refused: refused)
        }
        let opening = if let lock = state.journalLock { try lock.exclusively(open) } else { try open() }
        context = opening.context
        let unfinishedCompaction = opening.ownReader.foundUnfinishedCompaction && !readOnly
        let (lastOwnStamp, read, storeID) = (state.lastOwnStamp, opening.own, opening.storeID)
        journal = OwnJournal(lock: state.journalLock, opened: OwnFolder.State(writer: opening.writer, reader: opening.ownReader,
                                                                               refusedAtOpen: opening.refused))
        engine = Mutex(EngineState(context: context, own: journal.folder, read: read, storeID: storeID, lastOwnStamp: lastOwnStamp))
        notifier = ChangeNotifier(changeLog: ChangeLog(path: state.changeLogPath, isWritable: !readOnly))
        self.state = state
        compactor = Compactor(lock: state.compactionLock, journal: journal, lane: lanes.lane(for: .compaction), warn: warn)
        progress = ProgressPublisher(sync: context.sync, device: context.deviceID, clock: clock, notedOwnStamp: lastOwnStamp,
                                     lane: lanes.lane(for: .progress), warn: warn)
        waits = WaitAnnouncer(sync: context.sync, device: context.deviceID, warn: warn)
        health = HealthMonitor(staleAfter: Self.staleAfter, warn: warn)
        survey = FolderSurvey(sync: context.sync)
        ticker = Ticker(lane: lanes.lane(for: .tick))
        signing = readOnly || context.sync.sealing == nil ? nil : SigningSchedule(lane: lanes.signsOnALane ? lanes.lane(for: .signing) : nil)
        notifier.changeLog.setWriting(state.isPrimary)
        // Its snapshot is written now, so that other devices follow this folder again.
        if unfinishedCompaction { compactor.compact(engine) }
        guard !readOnly else { return }
        rewriteOwnRecordsAhead()
        announceInitialSync()
        publishProgress()
        startTicking()
    }

    /// Why a sealed device does not open its store: its own folder holds less than it had written before it
    /// stopped (`wentBack`), an older copy a writer of the folder put in its place, on which it builds nothing.
    static func ownFolderWentBack(_ wentBack: String, folder: String, state: String) -> KVStoreError {
        .io(path: folder, reason: "this device's own folder went back while it was stopped (\(wentBack)): an older copy is in its place, "
            + "and this device builds nothing on it; bring the folder back as it wrote it (another machine's copy, or a backup), "
            + "or, if that copy is gone for good, move \(state) away and join the store again as a new device (kvfs join)")
    }

    /// What opening the store settles under the journal's lock.
    private struct Opening {
        var context: StoreContext
        var storeID: String
        var ownReader: DeviceFolderReader
        var own: DeviceFolderReader.Batch
        var writer: JournalWriter
        var refused: [SyncWarning]
    }

    deinit { close() }

    /// Logs a warning through swift-log (label `kvfs.store`): to standard
    /// error, unless the program bootstrapped another handler (the kvfs
    /// daemon logs to the journal or to `daemon.log`).
    public static func printWarning(_ message: String) {
        storeLogger.warning("\(message)")
    }

    // MARK: Reading

    /// The store id of the sync directory; empty while the folder holds other
    /// devices but its `store-id` has not arrived yet.
    public var storeID: String { engine.withLock { $0.folders.storeID } }

    /// A key's entry (value, file form, stamp), or nil.
    public func entry(forKey key: StoreKey) -> KeyEntry? {
        engine.withLock { $0.merged.visible[key] }
    }

    /// A key's value, or nil.
    public func value(forKey key: StoreKey) -> PropertyListValue? { entry(forKey: key)?.value }

    /// Every key's value.
    public var values: [StoreKey: PropertyListValue] {
        engine.withLock { $0.merged.visible.mapValues(\.value) }
    }

    /// Every key's entry.
    public var entries: [StoreKey: KeyEntry] { engine.withLock { $0.merged.visible } }

    /// What the store uses against its limits.
    public var usage: QuotaUsage { engine.withLock { $0.merged.usage } }

    /// The name a device gave itself (remembered once its folder is gone), or its id.
    public func name(of device: DeviceID) -> String { engine.withLock { $0.displayName(of: device) } }

    // MARK: Writing

    /// Sets a key's value, after checking the key and the quota.
    public func set(_ value: PropertyListValue, forKey key: StoreKey) throws(KVStoreError) {
        try write(key: key) { _, _ throws(KVStoreError) in .put(key: key, value: value) }
    }

    /// Sets a key from the bytes a writer left in its file (docs/files.md § Values and their files), and returns the value stored.
    @discardableResult
    public func setFileContent(_ content: [UInt8], forKey key: StoreKey) throws(KVStoreError) -> PropertyListValue {
        var stored: PropertyListValue?
        try write(key: key) { current, _ throws(KVStoreError) in
            let value = try FileForm.decode(content, key: key, existingType: current?.value.type)
            stored = value
            return .put(key: key, value: value)
        }
        return stored!
    }

    /// Converts a key's value to another type when nothing is lost (`setfattr -n user.kvfs.type`).
    public func convert(key: StoreKey, to type: PropertyListType) throws(KVStoreError) {
        try write(key: key) { current, _ throws(KVStoreError) in
            guard let current else { throw .noSuchKey(key) }
            guard let value = current.value.converted(to: type) else {
                throw .invalidValue(key: key, reason: "a \(current.value.type.rawValue) cannot become a \(type.rawValue) without loss")
            }
            return .put(key: key, value: value)
        }
    }

    /// Checks, without writing, that `key` may hold a value of `size` bytes
    /// (for a writer whose buffer grows); a refusal is logged as QuotaViolationChange.
    public func checkQuota(forKey key: StoreKey, size: Int) throws(KVStoreError) {
        do throws(KVStoreError) {
            try QuotaUsage.checkKey(key)
            try engine.withLock { state throws(KVStoreError) in
                try state.merged.usage.checkWrite(key: key, oldSize: state.merged.visible[key]?.size, newSize: size)
            }
        } catch {
            if error.isQuotaViolation { notifier.record(StoreChange(reason: .quotaViolationChange, keys: [key]), notifying: false) }
            throw error
        }
    }

    /// Removes a key; removing a missing key does nothing.
    public func removeValue(forKey key: StoreKey) throws(KVStoreError) {
        try write(key: key) { current, _ throws(KVStoreError) in
            current == nil ? nil : .remove(key: key)
        }
    }

    /// Renames a key in one step: the target's old value goes, unless `replace` is false.
    public func rename(_ from: StoreKey, to: StoreKey, replace: Bool = true) throws(KVStoreError) {
        try QuotaUsage.checkKey(to)
        try write(key: from) { current, merged throws(KVStoreError) in
            guard let current else { throw .noSuchKey(from) }
            if from == to { return nil }
            let target = merged.visible[to]
            if target != nil && !replace { throw .keyExists(to) }
            var usage = merged.usage
            usage.keys -= 1
            usage.bytes -= current.size
            try usage.checkWrite(key: to, oldSize: target?.size, newSize: current.size)
            return .rename(from: from, to: to, value: current.value)
        }
    }

    /// Compacts the journal on the compactor's queue, if it has grown enough
    /// by then: the write that made it due does not wait for the snapshot.
    private func compactWhenDue() {
        compactor.inBackground { [weak self] in
            guard let self else { return }
            compactor.compactIfDue(engine)
        }
    }

    /// The write path for one key: ``write(keys:_:)``.
    private func write(key: StoreKey, _ decide: (KeyEntry?, MergedState) throws(KVStoreError) -> JournalRecord.Operation?)
    throws(KVStoreError) {
        try write(keys: [key]) { current, merged throws(KVStoreError) in try decide(current[0], merged).map { [$0] } ?? [] }
    }

    /// The one write path: the operations decided from the entries of `keys`
    /// (and what the store holds), the quota checked for all of them
    /// together, their records journaled in one append and merged, inside
    /// the engine's `Mutex` (``EngineState/write(_:refusing:)``), in this
    /// process's turn at the journal (``OwnJournal``, taken first: the wait
    /// for another process's turn holds up no read); then, outside both, the
    /// commit listeners and the observers, and, if the journal has grown
    /// enough, a compaction queued (``compactWhenDue()``). All or nothing:
    /// one refusal writes none.
    ///
    /// While a compaction is unfinished for want of room, it is done again
    /// first: the room must go to its snapshot, or the old segments it would
    /// remove keep the disk full. A write that finds the disk full compacts
    /// (the room that removals and overwrites left behind is then free: a
    /// small disk stayed full however many keys were removed), keeping none
    /// of this device's history, and is tried once more.
    func write(keys: [StoreKey], _ decide: ([KeyEntry?], MergedState) throws(KVStoreError) -> [JournalRecord.Operation])
    throws(KVStoreError) {
        var refusedKey = keys.first ?? ""  // the key a quota refusal names
        defer {
            reportOtherProcessesWrites()
            announceVisibleChanges()
        }
        do throws(KVStoreError) {
            for key in keys { try QuotaUsage.checkKey(key) }
            compactor.retryUnfinished(engine)
            func attempt() throws(KVStoreError) -> EngineState.WriteOutcome? {
                try journal.take { kept throws(KVStoreError) in
                    try engine.withLock { state throws(KVStoreError) in
                        if !kept { try state.followOtherProcesses() }
                        let current = try state.entriesToReplace(keys)
                        let operations = try decide(current, state.merged)
                        guard !operations.isEmpty else { return nil }
                        return try state.write(operations, refusing: &refusedKey)
                    }
                }
            }
            let written: EngineState.WriteOutcome?
            do throws(KVStoreError) {
                written = try attempt()
            } catch {
                guard case .diskFull = error, case .written = compactor.compact(engine, adding: { _ in Compactor.Additions(keepsHistory: false) })
                else { throw error }
                context.warn("the disk under the store is full: this device's folder keeps no history of its keys from now, to make room for the write")
                written = try attempt()
            }
            guard let outcome = written else { return }
            signing?.appended()  // sealed: its mark follows (docs/sealed.md § Signing at sync points)
            for record in outcome.records { notifier.appended(record) }
            if outcome.compactionDue { compactWhenDue() }
            // Sealed, the write is readable elsewhere once its mark is there, which tells the listeners
            // (signAppends): a Syncthing scan now would send the records without it, and Syncthing then
            // waits 250 ms before it sends the next change, the mark (docs/performance.md § What sealing costs).
            if signing == nil { notifier.committed() }
            if !outcome.displaced.isEmpty {
                notifier.record(StoreChange(reason: .quotaViolationChange, keys: Array(outcome.displaced)))
            }
        } catch {
            if error.isQuotaViolation { notifier.record(StoreChange(reason: .quotaViolationChange, keys: [refusedKey]), notifying: false) }
            if case .journalBusy = error { context.warn("a write of '\(refusedKey)' was refused: \(error)") }
            throw error
        }
    }
}
