import Foundation

/// History as this device sees it: the versions the folders hold
/// (``HistoryIndex``), less what the retention lets go (``RetentionRule``).
extension EngineState {
    /// How long the store's setting, read from the folders, is taken as it is
    /// before it is read again (and after each refresh): settings change by
    /// hand, and reading every folder's file for each lookup would cost a
    /// listing of 10,000 versions its time.
    static let retentionRereadInterval: Duration = .seconds(1)

    /// The store's setting: the one with the greatest stamp in the device
    /// folders, or the default. Read again once ``retentionRereadInterval`` has passed.
    mutating func retentionSetting() -> RetentionSetting? {
        let now = ContinuousClock.now
        if let read = retentionRead, now - read.at < Self.retentionRereadInterval { return read.setting }
        let setting = sync.retentionSetting(among: Set(sync.devices()).union([deviceID]))
        retentionRead = (setting, now)
        return setting
    }

    /// The store's retention.
    mutating func retention() -> HistoryRetention { retentionSetting()?.retention ?? .standard }

    /// Whether a folder's record stamped at `time` is passed over, as the
    /// merge passes it over: a retirement lets every device ignore the
    /// retired device's records up to where its adopter read it
    /// (``Adoption``), and a record stamped past the clock's horizon is held
    /// back, or rewritten if it is this device's (docs/sync.md § Stamps from the future).
    private func isHidden(_ folder: DeviceID, _ time: HLCTimestamp) -> Bool {
        folders.adoptedUpTo[folder].map { time <= $0 } ?? false || time > clock.horizon()
    }

    /// What the retention keeps now of the versions that are not current
    /// values. The budget's floor is worked out again only when the versions,
    /// the winners or the setting changed (``HistoryIndex/Cache``).
    mutating func retentionFloor() -> RetentionRule.Floor {
        let retention = retention()
        guard !retention.isOff else { return .none }
        let oldest = RetentionRule.oldestKept(days: retention.days, now: clock.wallTime())
        if let cache = history.cache, cache.revision == history.revision, cache.mergeRevision == merged.revision,
           cache.retention == retention {
            return RetentionRule.Floor(keepsAny: true, oldest: oldest, overBudget: cache.budgetFloor)
        }
        let candidates = history.allVersions(hidden: isHidden).compactMap { version -> RetentionRule.Candidate? in
            if !version.isRemoval, merged.winners[version.key]?.stamp == version.stamp { return nil }  // a current value
            return RetentionRule.Candidate(stamp: version.stamp, charge: version.charge)
        }
        let overBudget = RetentionRule.overBudget(candidates, bytes: retention.bytes)
        history.cache = HistoryIndex.Cache(revision: history.revision, mergeRevision: merged.revision, retention: retention,
                                           budgetFloor: overBudget)
        return RetentionRule.Floor(keepsAny: true, oldest: oldest, overBudget: overBudget)
    }

    /// The versions of `key` the retention keeps, oldest first, each with
    /// whether it is current and a folder that holds its record.
    mutating func keptVersions(of key: StoreKey) -> [(version: HistoryIndex.Version, isCurrent: Bool)] {
        let floor = retentionFloor()
        let current = merged.winners[key]?.stamp
        return history.versions(of: key, hidden: isHidden).compactMap { version in
            let isCurrent = version.stamp == current
            guard isCurrent && !version.isRemoval || floor.keeps(version.stamp) else { return nil }
            return (version, isCurrent)
        }
    }

    /// The versions of `key` the retention keeps, as ``KeyVersion``s without
    /// their values, each marked ``KeyVersion/lost`` when it lost to a
    /// concurrent write (``HistoryIndex/Version/lost(to:)``).
    mutating func keyVersions(of key: StoreKey) -> [KeyVersion] {
        let kept = keptVersions(of: key)
        let deviceNames = kept.map { displayName(of: $0.version.stamp.device) }
        let names = VersionName.names(of: kept.indices.map { (kept[$0].version.stamp.time, deviceNames[$0], kept[$0].version.isRemoval) })
        return kept.indices.map { index in
            let (version, isCurrent) = kept[index]
            var keyVersion = KeyVersion(key: key, stamp: version.stamp, deviceName: deviceNames[index], isRemoval: version.isRemoval,
                                        size: version.size, isCurrent: isCurrent, name: names[index])
            keyVersion.lost = kept.indices.contains(index + 1) && version.lost(to: kept[index + 1].version)
            return keyVersion
        }
    }

    /// Every key with a version the retention keeps, removed keys included.
    mutating func historyKeys() -> [StoreKey] {
        let floor = retentionFloor()
        var keys = Set(merged.winners.compactMap { $0.value.value == nil ? nil : $0.key })  // current values
        for version in history.allVersions(hidden: isHidden) where !keys.contains(version.key) && floor.keeps(version.stamp) {
            keys.insert(version.key)
        }
        return keys.sorted()
    }

    /// Where the record of `key`'s version `stamp` lies, if a folder holds it.
    func location(of key: StoreKey, stamp: Stamp) -> (folder: DeviceFolder, location: RecordLocation)? {
        history.versions(of: key, hidden: isHidden).first { $0.stamp == stamp }.map { (sync.folder(of: $0.folder), $0.location) }
    }

    /// Sets the store's retention: stamped now, in this device's folder,
    /// after the setting in force (the clock moves past its stamp), so that
    /// it wins over every setting this device has seen, even one made in
    /// the same millisecond.
    mutating func setRetention(_ retention: HistoryRetention) throws(KVStoreError) {
        guard !isClosed else { throw .io(path: sync.path, reason: "the store is closed") }
        guard !context.isReadOnly else { throw .readOnly(path: sync.folder(of: deviceID).path) }
        retentionRead = nil
        if let current = retentionSetting() { clock.observe(current.stamp.time) }
        let setting = RetentionSetting(retention: try retention.validated(), stamp: Stamp(time: try clock.now(), device: deviceID))
        try sync.publish(setting, of: deviceID)
        retentionRead = nil
    }
}

extension EngineState {
    /// The versions of `device`'s folder that are not current and that the
    /// retention keeps, but those another folder holds: what adopting it
    /// (`kvfs retire`, or its folder vanishing) copies besides the records
    /// that win, so that its history stays. Of each key, newest first, as a
    /// compaction keeps them (``Compactor/snapshot(of:adding:)``): once one is
    /// left out, the older ones go too. The folder's newest record of a key
    /// is in memory; older ones are copied from its files.
    mutating func historyToAdopt(of device: DeviceID) -> (records: [JournalRecord], copied: [StoredRecord]) {
        let floor = retentionFloor()
        guard floor.keepsAny else { return ([], []) }
        let newest = merged.folders[device] ?? [:]
        var records: [JournalRecord] = [], copied: [StoredRecord] = []
        for (key, versions) in history.versions(in: device) {
            let winner = merged.winners[key]?.stamp
            let elsewhere = history.stamps(of: key, outside: device)
            for version in versions.reversed() where version.stamp != winner {
                guard floor.keeps(version.stamp) else { break }
                if elsewhere.contains(version.stamp) { continue }
                if let latest = newest[key], latest.stamp == version.stamp {
                    records.append(MergedState.record(key, latest))
                } else {
                    copied.append(StoredRecord(key: key, stamp: version.stamp, folder: sync.folder(of: device), location: version.location))
                }
            }
        }
        return (records, copied)
    }
}
