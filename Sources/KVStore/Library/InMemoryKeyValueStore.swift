import Foundation
import Synchronization

/// A ``KeyValueStore`` in memory, for tests: the same API, typing and quota
/// rules as the sync-directory store (sizes are file-form sizes, checked by
/// ``QuotaUsage``), a fresh empty store per instance, ``reset()``, and
/// ``simulateExternalChange(_:reason:)`` to see how an app reacts to other devices.
/// It keeps history as the sync-directory store does (``history(forKey:)``,
/// ``restore(_:forKey:)``), by the same `RetentionRule`: its writes are
/// versions of the device ``deviceName``, simulated changes versions of
/// ``simulatedDeviceName``.
///
/// Changes (simulated ones and quota refusals) are posted synchronously on
/// the calling thread, so a test can check its reaction right after the call.
/// Quota refusals are posted the same way by ``UbiquitousKeyValueStore``;
/// other devices' changes reach that one asynchronously, on a queue of its own.
public final class InMemoryKeyValueStore: KeyValueStore {
    /// One version of a key, kept with its value.
    private struct Version {
        var stamp: Stamp
        var value: PropertyListValue?
        var size: Int
    }

    /// Values with their sizes and the usage they add up to, and each key's
    /// versions (oldest first), kept together under one lock.
    private struct Contents {
        var values: [StoreKey: PropertyListValue] = [:]
        var sizes: [StoreKey: Int] = [:]
        var usage = QuotaUsage()
        var versions: [StoreKey: [Version]] = [:]

        /// Adds a version of `key`, then lets go of what the retention no longer keeps.
        mutating func record(_ value: PropertyListValue?, forKey key: StoreKey, size: Int, stamp: Stamp,
                             retention: HistoryRetention, now: UInt64) {
            versions[key, default: []].append(Version(stamp: stamp, value: value, size: size))
            let floor = self.floor(retention: retention, now: now)
            for (key, kept) in versions {
                let left = kept.indices.filter { isKept(kept, at: $0, floor: floor) }.map { kept[$0] }
                versions[key] = left.isEmpty ? nil : left
            }
        }

        /// What the retention keeps of the versions that are not a key's current value.
        func floor(retention: HistoryRetention, now: UInt64) -> RetentionRule.Floor {
            let candidates = versions.flatMap { key, kept in
                kept.indices.filter { !isCurrentValue(kept, at: $0) }.map {
                    // Charged as the disk store charges it: its record, based on the key's version before it.
                    RetentionRule.Candidate(stamp: kept[$0].stamp, charge: RetentionRule.charge(
                        key: key, value: kept[$0].value, base: $0 > 0 ? .version(kept[$0 - 1].stamp) : .nothing, rank: nil))
                }
            }
            return RetentionRule.floor(of: candidates, retention: retention, now: now)
        }

        /// Whether the version at `index` is its key's current value (the newest, not a removal).
        func isCurrentValue(_ kept: [Version], at index: Int) -> Bool {
            index == kept.count - 1 && kept[index].value != nil
        }

        func isKept(_ kept: [Version], at index: Int, floor: RetentionRule.Floor) -> Bool {
            isCurrentValue(kept, at: index) || floor.keeps(kept[index].stamp)
        }

        mutating func put(_ value: PropertyListValue, forKey key: StoreKey, size: Int) {
            remove(key)
            values[key] = value
            sizes[key] = size
            usage.keys += 1
            usage.bytes += size
        }

        mutating func remove(_ key: StoreKey) {
            guard let size = sizes.removeValue(forKey: key) else { return }
            values[key] = nil
            usage.keys -= 1
            usage.bytes -= size
        }
    }

    private let contents = Mutex(Contents())
    private let broadcaster = ChangeBroadcaster()
    private let clock = HybridLogicalClock()
    /// What the store's history keeps.
    public let retention: HistoryRetention
    /// The device this store's own writes are versions of.
    public let deviceID = DeviceID.random()
    /// The device ``simulateExternalChange(_:reason:)``'s changes are versions of.
    public let simulatedDeviceID = DeviceID.random()
    /// How history names this store's device.
    public let deviceName = "memory"
    /// How history names the device of simulated changes.
    public let simulatedDeviceName = "simulated"

    /// An empty store whose history keeps what `retention` keeps.
    public init(retention: HistoryRetention = .standard) {
        self.retention = retention
    }

    /// The value stored for `key`, or nil.
    public func value(forKey key: String) -> PropertyListValue? { contents.withLock { $0.values[StoreKey(key)] } }

    /// Every key and its value.
    public var values: [StoreKey: PropertyListValue] { contents.withLock { $0.values } }

    /// What the store uses against its limits.
    public var usage: QuotaUsage { contents.withLock { $0.usage } }

    /// Stores `value` for `key` after checking the key and the quota; a quota
    /// refusal changes nothing, posts QuotaViolationChange (before this
    /// returns, on the calling thread, as the sync-directory store does) and throws.
    public func setValue(_ value: PropertyListValue, forKey key: String) throws(KVStoreError) {
        let key = StoreKey(key)
        try QuotaUsage.checkKey(key)
        let size = FileForm.encode(value).count
        // Posted outside the lock: an observer may read the store.
        try broadcaster.postingQuotaRefusal(of: key, by: self) { () throws(KVStoreError) in
            let stamp = Stamp(time: try clock.now(), device: deviceID)
            try contents.withLock { (contents) throws(KVStoreError) in
                try contents.usage.checkWrite(key: key, oldSize: contents.sizes[key], newSize: size)
                contents.put(value, forKey: key, size: size)
                contents.record(value, forKey: key, size: size, stamp: stamp, retention: retention, now: clock.wallTime())
            }
        }
    }

    /// Removes `key`'s value; removing a missing key does nothing.
    public func removeValue(forKey key: String) throws(KVStoreError) {
        let key = StoreKey(key)
        try QuotaUsage.checkKey(key)
        let stamp = Stamp(time: try clock.now(), device: deviceID)
        contents.withLock { contents in
            guard contents.values[key] != nil else { return }
            contents.remove(key)
            contents.record(nil, forKey: key, size: 0, stamp: stamp, retention: retention, now: clock.wallTime())
        }
    }

    /// The versions of `key` within the retention, oldest first, with their values.
    public func history(forKey key: String) -> [KeyVersion] {
        let key = StoreKey(key)
        let now = clock.wallTime()
        let (kept, newest): ([Version], Stamp?) = contents.withLock { contents in
            let floor = contents.floor(retention: retention, now: now)
            let versions = contents.versions[key] ?? []
            // The newest version is the key's current one, a removal too (only a value is always kept).
            return (versions.indices.filter { contents.isKept(versions, at: $0, floor: floor) }.map { versions[$0] }, versions.last?.stamp)
        }
        let names = kept.map { $0.stamp.device == deviceID ? deviceName : simulatedDeviceName }
        let versionNames = VersionName.names(of: kept.indices.map { (kept[$0].stamp.time, names[$0], kept[$0].value == nil) })
        return kept.indices.map { index in
            KeyVersion(key: key, stamp: kept[index].stamp, deviceName: names[index], isRemoval: kept[index].value == nil,
                       size: kept[index].size, isCurrent: kept[index].stamp == newest,
                       name: versionNames[index], value: kept[index].value)
        }
    }

    /// Writes `version` as `key`'s new version: its value, or for a removal the key's removal.
    ///
    /// - Throws: ``KVStoreError/noSuchVersion(key:reason:)`` when the history
    ///   of `key` does not hold it (any more), or the key is removed already.
    public func restore(_ version: KeyVersion, forKey key: String) throws(KVStoreError) {
        guard let kept = history(forKey: version.key.string).first(where: { $0.stamp == version.stamp }) else {
            throw .noSuchVersion(key: StoreKey(key), reason: "version \(version.name) is no longer in its history")
        }
        if let value = kept.value {
            try setValue(value, forKey: key)
        } else {
            guard value(forKey: key) != nil else { throw .noSuchVersion(key: StoreKey(key), reason: "'\(key)' is removed already") }
            try removeValue(forKey: key)
        }
    }

    /// Nothing to exchange in memory: always true.
    @discardableResult
    public func synchronize() -> Bool { true }

    /// Simulated external changes and quota refusals, as an async sequence.
    public var changes: AsyncStream<StoreChange> { broadcaster.subscribe() }

    /// Empties the store, without notifications.
    public func reset() { contents.withLock { $0 = Contents() } }  // history too

    /// Applies changes as if another device made them, then posts them like the
    /// sync-directory store does (notification and `changes`).
    ///
    /// - Parameters:
    ///   - changes: each key's new value; nil removes the key. Applied as
    ///     they come, without a quota check: the other device already passed it.
    ///   - reason: why, as Apple reports it; `.serverChange` by default.
    public func simulateExternalChange(_ changes: [StoreKey: PropertyListValue?], reason: ChangeReason = .serverChange) {
        let now = clock.wallTime()
        let stamp = Stamp(time: (try? clock.now()) ?? HLCTimestamp(milliseconds: now, counter: 0), device: simulatedDeviceID)
        contents.withLock { contents in
            for (key, value) in changes where value != nil || contents.values[key] != nil {
                let size = value.map { FileForm.encode($0).count } ?? 0
                if let value { contents.put(value, forKey: key, size: size) } else { contents.remove(key) }
                contents.record(value, forKey: key, size: size, stamp: stamp, retention: retention, now: now)
            }
        }
        broadcaster.post(StoreChange(reason: reason, keys: Array(changes.keys)), from: self)
    }
}
