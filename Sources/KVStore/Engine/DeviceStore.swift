import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Identifies a change observer, to remove it.
public struct ObserverToken: Hashable, Sendable {
    let id: Int
}

/// One device's view of a store kept in a sync directory: the engine under the
/// mount, the command line and the library.
///
/// Reads come from memory: the last-writer-wins merge of every device's
/// journal. Writes are checked against the quota, stamped by the hybrid
/// logical clock, appended to this device's journal (so they survive the
/// process being killed once the call returns), and merged. Other devices'
/// records are read by ``refresh()``, which the watcher calls when the sync
/// directory changes.
public final class DeviceStore: @unchecked Sendable {
    /// The shared folder.
    public let syncDirectory: URL
    /// This device's private folder.
    public let stateDirectory: URL
    /// This device's id.
    public let deviceID: DeviceID
    /// This device's name, as other devices show it.
    public let deviceName: String
    /// The path of the change log.
    public var changeLogPath: String { changeLog.path }

    private let sync: SyncDirectory
    private let state: StateDirectory
    private let clock: HybridLogicalClock
    private let changeLog: ChangeLog
    /// Guards everything below. Observers and warnings are called outside it.
    private let lock = NSLock()
    private var merged = MergedState()
    private var writer: JournalWriter
    private var readers: [DeviceID: DeviceFolderReader] = [:]
    private var names: [DeviceID: String] = [:]
    private var storeIDValue: String
    private var lastSyncTime: Date?
    private var observers: [Int: @Sendable (StoreChange) -> Void] = [:]
    private var nextObserver = 0
    private var undeliveredInitialChange: StoreChange?
    private var closed = false
    private let notifications = DispatchQueue(label: "kvfs.store.changes")
    private var durabilityTimer: DispatchSourceTimer?
    private let warningHandler: @Sendable (String) -> Void

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
        return URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(fallback)
    }

    /// Opens (creating if needed) the store in `syncDirectory` as this device.
    ///
    /// - Parameters:
    ///   - stateDirectory: this device's folder; by default one under `$XDG_STATE_HOME/kvfs/`.
    ///   - deviceName: how other devices name this one; by default the host name.
    ///   - owner: what the lock file tells other processes about this one (e.g. the mount point).
    ///   - clock: the clock that stamps writes (tests give a skewed one).
    ///   - warn: where warnings about foreign or corrupt files go (standard error by default).
    /// - Throws: ``KVStoreError/stateDirectoryBusy(path:holder:)`` when another process has the state directory.
    public init(syncDirectory: URL, stateDirectory: URL? = nil, deviceName: String? = nil,
                owner: String = "", clock: HybridLogicalClock = HybridLogicalClock(),
                warn: @escaping @Sendable (String) -> Void = DeviceStore.printWarning) throws(KVStoreError) {
        self.syncDirectory = syncDirectory.standardizedFileURL
        self.stateDirectory = (stateDirectory ?? Self.defaultStateDirectory(for: syncDirectory)).standardizedFileURL
        self.clock = clock
        warningHandler = warn
        state = try StateDirectory(path: self.stateDirectory.path)
        try state.lock(owner: owner)
        deviceID = try state.deviceID()
        sync = SyncDirectory(path: self.syncDirectory.path)
        storeIDValue = try sync.createStoreIfNeeded()
        self.deviceName = deviceName ?? ProcessInfo.processInfo.hostName
        try sync.setName(self.deviceName, of: deviceID)
        changeLog = ChangeLog(path: state.changeLogPath)
        let ownReader = DeviceFolderReader(folder: sync.folder(of: deviceID), warn: warn)
        _ = merged.apply(ownReader.readNew())
        writer = try JournalWriter(folder: sync.folder(of: deviceID), recoveredBy: ownReader)
        readers[deviceID] = ownReader
        for record in merged.winners.values { clock.observe(record.stamp.time) }
        _ = readOtherDevices()
        announceInitialSync()
        startDurabilityTimer()
    }

    deinit { close() }

    /// Prints a warning to standard error.
    public static func printWarning(_ message: String) {
        FileHandle.standardError.write(Data("kvfs: warning: \(message)\n".utf8))
    }

    // MARK: Reading

    /// The store id of the sync directory.
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

    /// The name a device gave itself, or its id.
    public func name(of device: DeviceID) -> String {
        if device == deviceID { return deviceName }
        if let name = lock.withLock({ names[device] }) { return name }
        let name = sync.name(of: device) ?? device.hex
        lock.withLock { names[device] = name }
        return name
    }

    // MARK: Writing

    /// Sets a key's value, after checking the key and the quota.
    public func set(_ value: PropertyListValue, forKey key: String) throws(KVStoreError) {
        try write(key: key) { _ throws(KVStoreError) in .put(key: key, value: value) }
    }

    /// Sets a key from the bytes a writer left in its file (SPEC "Values"), and returns the value stored.
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
            if error.isQuotaViolation { record(StoreChange(reason: .quotaViolationChange, keys: [key])) }
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

    /// The one write path: decide the operation under the lock, check quota, journal, merge.
    private func write(key: String, _ decide: (KeyEntry?) throws(KVStoreError) -> JournalRecord.Operation?) throws(KVStoreError) {
        do throws(KVStoreError) {
            try QuotaUsage.checkKey(key)
            lock.lock()
            defer { lock.unlock() }
            guard !closed else { throw .io(path: syncDirectory.path, reason: "the store is closed") }
            let current = merged.visible[key]
            guard let operation = try decide(current) else { return }
            if case let .put(key, value) = operation {
                try merged.usage.checkWrite(key: key, oldSize: current?.size, newSize: FileForm.encode(value).count)
            }
            let record = JournalRecord(stamp: Stamp(time: clock.now(), device: deviceID), operation: operation)
            try writer.append(record)
            _ = merged.apply([record])
            if writer.shouldCompact { compact() }
        } catch {
            if error.isQuotaViolation { record(StoreChange(reason: .quotaViolationChange, keys: [key])) }
            throw error
        }
    }

    /// Compacts this device's journal into a snapshot. Called with the lock held.
    private func compact() {
        do {
            try writer.compact(merged.records(writtenBy: deviceID), stamp: Stamp(time: clock.now(), device: deviceID))
        } catch {
            warningHandler("compaction failed, the journal keeps growing: \(error)")
        }
    }

    // MARK: Syncing

    /// Makes every write durable on disk and reads other devices' new records now.
    public func synchronize() throws(KVStoreError) {
        try flush()
        refresh()
    }

    /// Makes every acknowledged write durable on disk (fsync of the journal).
    public func flush() throws(KVStoreError) {
        lock.lock()
        defer { lock.unlock() }
        try writer.sync()
    }

    /// Reads what other devices wrote since the last call, merges it, and
    /// reports it (change log and observers). Returns the change, if any.
    @discardableResult
    public func refresh() -> StoreChange? {
        let change: StoreChange? = lock.withLock {
            guard !closed else { return nil }
            if let account = checkAccount() { return account }
            let keys = readOtherDevices()
            lastSyncTime = Date()
            return keys.isEmpty ? nil : StoreChange(reason: .serverChange, keys: Array(keys))
        }
        if let change { record(change) }
        return change
    }

    /// Reads every other device's new records. Called with the lock held.
    private func readOtherDevices() -> Set<String> {
        var records: [JournalRecord] = []
        for device in sync.devices() where device != deviceID {
            let reader = readers[device] ?? DeviceFolderReader(folder: sync.folder(of: device), warn: warningHandler)
            readers[device] = reader
            records += reader.readNew().filter { $0.stamp.device == device || warnForeign($0, in: device) }
        }
        for record in records { clock.observe(record.stamp.time) }
        return merged.apply(records)
    }

    private func warnForeign(_ record: JournalRecord, in device: DeviceID) -> Bool {
        warningHandler("devices/\(device.hex): skipped a record stamped by another device (\(record.stamp.device.hex))")
        return false
    }

    /// A different store id in the sync directory: start over from its content. Called with the lock held.
    private func checkAccount() -> StoreChange? {
        guard let id = sync.storeID(), id != storeIDValue else { return nil }
        storeIDValue = id
        state.rememberedStoreID = id
        let before = Set(merged.visible.keys)
        merged = MergedState()
        readers = [:]
        let ownReader = DeviceFolderReader(folder: sync.folder(of: deviceID), warn: warningHandler)
        _ = merged.apply(ownReader.readNew())
        readers[deviceID] = ownReader
        do {
            try sync.setName(deviceName, of: deviceID)
            writer = try JournalWriter(folder: sync.folder(of: deviceID), recoveredBy: ownReader)
        } catch {
            warningHandler("cannot write to the new store: \(error)")
        }
        _ = readOtherDevices()
        return StoreChange(reason: .accountChange, keys: Array(before.union(merged.visible.keys)))
    }

    /// InitialSyncChange (or AccountChange) for what changed while this device was away.
    private func announceInitialSync() {
        let remembered = state.rememberedStoreID
        state.rememberedStoreID = storeIDValue
        if let remembered, !remembered.isEmpty, remembered != storeIDValue {
            record(StoreChange(reason: .accountChange, keys: Array(merged.visible.keys)))
            return
        }
        let seen = state.seenStamps()
        let changed = merged.winners.compactMap { key, winner -> String? in
            guard winner.stamp.device != deviceID, seen?[key] != winner.stamp else { return nil }
            return seen == nil && winner.value == nil ? nil : key
        }
        lastSyncTime = Date()
        if !changed.isEmpty {
            let change = StoreChange(reason: .initialSyncChange, keys: changed)
            undeliveredInitialChange = change
            record(change)
        }
    }

    // MARK: Changes

    /// Calls `observer` (on a private queue) for every change that did not come
    /// from this store's own writes, and for quota refusals. The first observer
    /// also gets the InitialSyncChange of opening, if there was one.
    public func addChangeObserver(_ observer: @escaping @Sendable (StoreChange) -> Void) -> ObserverToken {
        lock.withLock {
            nextObserver += 1
            observers[nextObserver] = observer
            if let initial = undeliveredInitialChange {
                undeliveredInitialChange = nil
                notifications.async { observer(initial) }
            }
            return ObserverToken(id: nextObserver)
        }
    }

    /// Stops calling an observer.
    public func removeChangeObserver(_ token: ObserverToken) {
        _ = lock.withLock { observers.removeValue(forKey: token.id) }
    }

    /// Logs a change and tells the observers. Called without the lock.
    private func record(_ change: StoreChange) {
        changeLog.append(change)
        let current = lock.withLock { Array(observers.values) }
        notifications.async { for observer in current { observer(change) } }
    }

    /// The change log's bytes.
    public func changeLogContents() -> [UInt8] { changeLog.contents() }

    // MARK: Status and lifetime

    /// What `.kvfs/status` and `kvfs status` show.
    public func status() -> StoreStatus {
        lock.withLock {
            var lastWrite: [DeviceID: HLCTimestamp] = [:]
            for winner in merged.winners.values {
                lastWrite[winner.stamp.device] = max(lastWrite[winner.stamp.device] ?? winner.stamp.time, winner.stamp.time)
            }
            var devices = Set(readers.keys)
            devices.insert(deviceID)
            return StoreStatus(
                storeID: storeIDValue, syncDirectory: syncDirectory.path, stateDirectory: stateDirectory.path,
                device: DeviceStatus(id: deviceID.hex, name: deviceName, lastWrite: lastWrite[deviceID]?.date),
                usage: merged.usage, setAside: merged.setAside.sorted(),
                devices: devices.sorted().map { id in
                    DeviceStatus(id: id.hex, name: names[id] ?? sync.name(of: id) ?? id.hex, lastWrite: lastWrite[id]?.date)
                },
                lastSync: lastSyncTime)
        }
    }

    /// Tells other processes what holds the state directory (the mount point, once mounted).
    public func recordOwner(_ owner: String) { state.recordOwner(owner) }

    /// Makes everything durable, remembers what this device has seen, and releases the state directory.
    public func close() {
        let wasOpen = lock.withLock {
            guard !closed else { return false }
            try? writer.sync()
            state.saveSeenStamps(merged.winners.mapValues(\.stamp))
            closed = true
            return true
        }
        guard wasOpen else { return }
        durabilityTimer?.cancel()
        state.unlock()
    }

    /// Bounds how long an acknowledged write waits for fsync: one second.
    private func startDurabilityTimer() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in try? self?.flush() }
        timer.resume()
        durabilityTimer = timer
    }
}
