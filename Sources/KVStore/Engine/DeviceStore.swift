import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Where the store's warnings go.
private let storeLogger = Logger(label: "kvfs.store")

/// Identifies a change observer, to remove it.
public struct ObserverToken: Hashable, Sendable {
    let id: Int
}

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
public final class DeviceStore: @unchecked Sendable {
    /// The shared folder.
    public let syncDirectory: URL
    /// This device's private folder.
    public let stateDirectory: URL
    /// This device's id.
    public let deviceID: DeviceID
    /// This device's name, as other devices show it.
    public let deviceName: String
    /// Whether the store was opened only to be read: then nothing in the sync
    /// directory or the state directory is created or written.
    public let isReadOnly: Bool
    /// The path of the change log.
    public var changeLogPath: String { changeLog.path }

    // Shared with the extensions in DeviceStore+*.swift.
    let sync: SyncDirectory
    let state: StateDirectory
    let clock: HybridLogicalClock
    let changeLog: ChangeLog
    let warningHandler: @Sendable (String) -> Void
    let notifications = DispatchQueue(label: "kvfs.store.changes")
    /// Guards everything below. Observers and warnings are called outside it.
    let lock = NSLock()
    var merged = MergedState()
    var writer: JournalWriter
    var readers: [DeviceID: DeviceFolderReader] = [:]
    /// Other devices' records stamped too far ahead of this device's clock, for later.
    var heldBack = HeldBackRecords()
    var names: [DeviceID: String] = [:]
    var storeIDValue: String
    var lastSyncTime: Date?
    /// Per device folder, what it says it adopted (``Adoption``), this device's own included.
    var adoptions: [DeviceID: [DeviceID: Adoption]] = [:]
    /// Per adopted device, the stamp up to which its own folder's records are ignored: the adoptions in force here.
    var adoptedUpTo: [DeviceID: HLCTimestamp] = [:]
    /// Devices this device has read whose folders are not here now (vanished,
    /// or not arrived yet after a restart), with how far it had read them:
    /// they stay in its progress, and hold tombstones back, until retired.
    var remembered: [DeviceID: HLCTimestamp] = [:]
    /// The latest stamp in this device's own folder: what its progress calls `own`.
    var ownLatest: HLCTimestamp?
    var publishedProgress: ReadProgress?
    var lastProgressTime = Date.distantPast
    /// How often, at most, reading progress is published (tests shorten it).
    var progressInterval: TimeInterval = 10
    /// How often, at least, reading progress is published, changed or not: a heartbeat.
    var heartbeatInterval: TimeInterval = 30
    /// The own stamp last noted in the state directory.
    var notedOwnStamp: HLCTimestamp?
    /// What holds the store, as the state directory's lock says (`mount <mount point>` for a mount).
    var owner = ""
    /// The seconds without news after which the log calls a device quiet (tests shorten it).
    var healthThreshold = DeviceStore.staleAfter
    /// The health warnings logged and still standing (``logHealth()``).
    var loggedWarnings: Set<String> = []
    /// When health was last checked for the log.
    var lastHealthCheck = Date.distantPast
    var observers: [Int: @Sendable (StoreChange) -> Void] = [:]
    var commitListeners: [Int: @Sendable () -> Void] = [:]
    var visibilityObservers: [Int: @Sendable (Set<String>) -> Void] = [:]
    /// Keys whose visible entry changed and that the visibility observers have not been told of.
    var unannouncedKeys: Set<String> = []
    var nextObserver = 0
    var undeliveredInitialChange: StoreChange?
    var closed = false
    var durabilityTimer: DispatchSourceTimer?
    /// Where the once-a-second fsync and progress file are written, without the lock.
    let durability = DispatchQueue(label: "kvfs.store.durability", qos: .utility)
    /// Whether a compaction's snapshot is being written, without the lock,
    /// or could not be (``unfinishedCompaction``): no other compaction starts meanwhile.
    var compactionInFlight = false
    /// A compaction whose snapshot could not be written (a full disk), tried
    /// again each second and at close. This device appends to its new segment
    /// meanwhile, which other devices follow only once the snapshot is there.
    var unfinishedCompaction: JournalWriter.Compaction?
    /// Whether the log has said that a compaction's snapshot could not be written.
    var compactionFailureSaid = false
    /// Held while a compaction's snapshot is written, so that flush() and
    /// close() can wait for it. Taken with the lock held, never the other way round.
    let compactionLock = NSLock()
    /// Serializes writes of the progress file, whichever thread publishes.
    let progressLock = NSLock()
    /// Called with each record this device appends, under the lock (the property tests' reference model listens).
    var onAppend: ((JournalRecord) -> Void)?

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

    /// Opens (creating if needed) the store in `syncDirectory` as this device.
    ///
    /// - Parameters:
    ///   - stateDirectory: this device's folder; by default one under `$XDG_STATE_HOME/kvfs/`.
    ///   - deviceName: how other devices name this one; by default the host name.
    ///   - deviceName: how other devices name this one; by default the name it
    ///     has, or the host name for a new device. Only a name given here renames a device.
    ///   - owner: what the lock file tells other processes about this one (e.g. the mount point).
    ///   - readOnly: open only to read (`kvfs get`, `ls`, `status`): nothing is
    ///     created or written, so a read-only sync directory serves; writes
    ///     throw. A reader takes no lock, but throws as a writer would while a
    ///     process holds the state directory.
    ///   - clock: the clock that stamps writes (tests give a skewed one).
    ///   - warn: where warnings about foreign or corrupt files go (standard error by default).
    /// - Throws: ``KVStoreError/stateDirectoryBusy(path:holder:)`` when another process has the state directory.
    public convenience init(syncDirectory: URL, stateDirectory: URL? = nil, deviceName: String? = nil,
                            owner: String = "", readOnly: Bool = false, clock: HybridLogicalClock = HybridLogicalClock(),
                            warn: @escaping @Sendable (String) -> Void = DeviceStore.printWarning) throws(KVStoreError) {
        try self.init(syncDirectory: syncDirectory, stateDirectory: stateDirectory, deviceName: deviceName, owner: owner,
                      readOnly: readOnly, clock: clock, warn: warn, journalFiles: DiskJournalFiles())
    }

    /// Opens the store as the public initializer does, with the journal's
    /// segments opened by `journalFiles`: tests put in files that fail as a disk does.
    init(syncDirectory: URL, stateDirectory: URL?, deviceName: String?, owner: String = "", readOnly: Bool = false,
         clock: HybridLogicalClock, warn: @escaping @Sendable (String) -> Void, journalFiles: any JournalFileOpener) throws(KVStoreError) {
        self.syncDirectory = syncDirectory.standardizedFileURL
        self.stateDirectory = (stateDirectory ?? Self.defaultStateDirectory(for: syncDirectory)).standardizedFileURL
        self.clock = clock
        isReadOnly = readOnly
        warningHandler = warn
        state = try StateDirectory(path: self.stateDirectory.path, readOnly: readOnly)
        if readOnly { try state.checkNotHeld() } else { try state.lock(owner: owner) }
        self.owner = owner
        sync = SyncDirectory(path: self.syncDirectory.path, isWritable: !readOnly)
        let claim = WriterClaim(statePath: state.path, stateInode: state.inode)
        deviceID = try Self.ownDeviceID(state: state, sync: sync, claim: claim, warn: warn)
        storeIDValue = try sync.createStoreIfNeeded(for: deviceID)
        self.deviceName = try Self.settleName(deviceName, of: deviceID, in: sync)
        changeLog = ChangeLog(path: state.changeLogPath, isWritable: !readOnly)
        // The own folder is read before the writer opens it: the reader finds where its whole records end.
        let ownReader = DeviceFolderReader(device: deviceID, folder: sync.folder(of: deviceID), ownFolder: true, warn: warn)
        let own = ownReader.readNew()
        writer = readOnly ? JournalWriter(refusingWritesTo: sync.folder(of: deviceID))
            : try JournalWriter(folder: sync.folder(of: deviceID), recoveredBy: ownReader, claim: claim, files: journalFiles)
        lock.withLock {
            readers[deviceID] = ownReader
            _ = merge(own, from: deviceID)
            ownLatest = own.latest
            observePublishedProgress()
            _ = readOtherDevices()
            // Its snapshot is written now, so that other devices follow this folder again.
            if ownReader.foundUnfinishedCompaction && !readOnly { _ = compact(adopting: [], heldBack: []) }
        }
        guard !readOnly else { return }
        announceInitialSync()
        lock.withLock { publishProgress() }
        startDurabilityTimer()
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
    public var storeID: String { lock.withLock { storeIDValue } }

    /// A key's entry (value, file form, stamp), or nil.
    public func entry(forKey key: String) -> KeyEntry? {
        lock.withLock { merged.visible[key] }
    }

    /// A key's value, or nil.
    public func value(forKey key: String) -> PropertyListValue? { entry(forKey: key)?.value }

    /// Every key's value.
    public var values: [String: PropertyListValue] {
        lock.withLock { merged.visible.mapValues(\.value) }
    }

    /// Every key's entry.
    public var entries: [String: KeyEntry] { lock.withLock { merged.visible } }

    /// What the store uses against its limits.
    public var usage: QuotaUsage { lock.withLock { merged.usage } }

    /// The name a device gave itself (remembered once its folder is gone), or its id.
    public func name(of device: DeviceID) -> String { lock.withLock { displayName(of: device) } }

    // MARK: Writing

    /// Sets a key's value, after checking the key and the quota.
    public func set(_ value: PropertyListValue, forKey key: String) throws(KVStoreError) {
        try write(key: key) { _ throws(KVStoreError) in .put(key: key, value: value) }
    }

    /// Sets a key from the bytes a writer left in its file (README § Values and their files), and returns the value stored.
    @discardableResult
    public func setFileContent(_ content: [UInt8], forKey key: String) throws(KVStoreError) -> PropertyListValue {
        var stored: PropertyListValue?
        try write(key: key) { current throws(KVStoreError) in
            let value = try FileForm.decode(content, key: key, existingType: current?.value.type)
            stored = value
            return .put(key: key, value: value)
        }
        return stored!
    }

    /// Converts a key's value to another type when nothing is lost (`setfattr -n user.kvfs.type`).
    public func convert(key: String, to type: PropertyListType) throws(KVStoreError) {
        try write(key: key) { current throws(KVStoreError) in
            guard let current else { throw .noSuchKey(key) }
            guard let value = current.value.converted(to: type) else {
                throw .invalidValue(key: key, reason: "a \(current.value.type.rawValue) cannot become a \(type.rawValue) without loss")
            }
            return .put(key: key, value: value)
        }
    }

    /// Checks, without writing, that `key` may hold a value of `size` bytes
    /// (for a writer whose buffer grows); a refusal is logged as QuotaViolationChange.
    public func checkQuota(forKey key: String, size: Int) throws(KVStoreError) {
        do throws(KVStoreError) {
            try QuotaUsage.checkKey(key)
            lock.lock()
            defer { lock.unlock() }
            try merged.usage.checkWrite(key: key, oldSize: merged.visible[key]?.size, newSize: size)
        } catch {
            if error.isQuotaViolation { record(StoreChange(reason: .quotaViolationChange, keys: [key]), notifying: false) }
            throw error
        }
    }

    /// Removes a key; removing a missing key does nothing.
    public func removeValue(forKey key: String) throws(KVStoreError) {
        try write(key: key) { current throws(KVStoreError) in
            current == nil ? nil : .remove(key: key)
        }
    }

    /// Renames a key in one step: the target's old value goes, unless `replace` is false.
    public func rename(_ from: String, to: String, replace: Bool = true) throws(KVStoreError) {
        try QuotaUsage.checkKey(to)
        try write(key: from) { current throws(KVStoreError) in
            guard let current else { throw .noSuchKey(from) }
            if from == to { return nil }
            let target = self.merged.visible[to]
            if target != nil && !replace { throw .keyExists(to) }
            var usage = self.merged.usage
            usage.keys -= 1
            usage.bytes -= current.size
            try usage.checkWrite(key: to, oldSize: target?.size, newSize: current.size)
            return .rename(from: from, to: to, value: current.value)
        }
    }

    /// The write path for one key: ``write(keys:_:)``.
    private func write(key: String, _ decide: (KeyEntry?) throws(KVStoreError) -> JournalRecord.Operation?) throws(KVStoreError) {
        try write(keys: [key]) { current throws(KVStoreError) in try decide(current[0]).map { [$0] } ?? [] }
    }

    /// The one write path: decide the operations under the lock from the
    /// entries of `keys`, check the quota for all of them together, journal
    /// them in one append, merge. All or nothing: one refusal writes none.
    func write(keys: [String], _ decide: ([KeyEntry?]) throws(KVStoreError) -> [JournalRecord.Operation]) throws(KVStoreError) {
        var refusedKey = keys.first ?? ""  // the key a quota refusal names
        var listeners: [@Sendable () -> Void] = []
        var displaced: Set<String> = []
        var compaction: JournalWriter.Compaction?
        defer {  // after the lock is released
            if let compaction { finishWithoutLock(compaction) }  // the writer that started it writes the snapshot
            for listener in listeners { listener() }
            if !displaced.isEmpty { record(StoreChange(reason: .quotaViolationChange, keys: Array(displaced))) }
            announceVisibleChanges()
        }
        do throws(KVStoreError) {
            for key in keys { try QuotaUsage.checkKey(key) }
            lock.lock()
            defer { lock.unlock() }
            guard !closed else { throw .io(path: syncDirectory.path, reason: "the store is closed") }
            let operations = try decide(keys.map { merged.visible[$0] })
            guard !operations.isEmpty else { return }
            var usage = merged.usage
            for case let .put(key, value) in operations {
                refusedKey = key
                let oldSize = merged.visible[key]?.size, newSize = FileForm.encode(value).count
                try usage.checkWrite(key: key, oldSize: oldSize, newSize: newSize)
                usage = QuotaUsage(keys: usage.keys + (oldSize == nil ? 1 : 0), bytes: usage.bytes - (oldSize ?? 0) + newSize)
            }
            let records = try append(operations)
            ownLatest = records[records.count - 1].stamp.time
            for record in records { onAppend?(record) }
            let setAsideBefore = merged.setAside
            let changed = merged.apply(records, in: deviceID)
            // The caller knows what it wrote; the quota rule may have moved other keys.
            unannouncedKeys.formUnion(changed.subtracting(records.flatMap { $0.changes.map(\.key) }))
            displaced = merged.setAside.subtracting(setAsideBefore)
            if writer.shouldCompact && !compactionInFlight { compaction = startCompaction() }
            listeners = Array(commitListeners.values)
        } catch {
            if error.isQuotaViolation { record(StoreChange(reason: .quotaViolationChange, keys: [refusedKey]), notifying: false) }
            throw error
        }
    }

    /// Stamps `operations` and appends them to this device's journal, in one write. On a full
    /// disk it compacts the journal first (the room that removals and
    /// overwrites left behind is then free: a small disk stayed full however
    /// many keys were removed) and tries once more, stamped anew after the
    /// snapshot. While a compaction is unfinished for want of room, it is
    /// tried before each append: the room must go to the snapshot first, or
    /// the old segments it would remove keep the disk full. Called with the lock held.
    private func append(_ operations: [JournalRecord.Operation]) throws(KVStoreError) -> [JournalRecord] {
        if unfinishedCompaction != nil { _ = compact(adopting: [], heldBack: []) }
        func stamped() throws(KVStoreError) -> [JournalRecord] {
            try operations.map { operation throws(KVStoreError) in
                JournalRecord(stamp: Stamp(time: try clock.now(), device: deviceID), operation: operation, rank: rankKept(by: operation))
            }
        }
        let records = try stamped()
        do {
            try writer.append(records)
            return records
        } catch {
            guard case .diskFull = error, compact(adopting: [], heldBack: []) != nil else { throw error }
            let again = try stamped()
            try writer.append(again)
            return again
        }
    }

    /// The quota rule's place (``JournalRecord/rank``) a write's value takes:
    /// that of the visible value it replaces (a rename's source), so that a
    /// write that fits what the store shows is admitted; nil (its own stamp,
    /// the newest) for a key that shows no value. Called with the lock held.
    private func rankKept(by operation: JournalRecord.Operation) -> Stamp? {
        switch operation {
        case let .put(key, _), let .rename(key, _, _): merged.visible[key]?.rank
        case .remove, .snapshotEnd: nil
        }
    }
}
