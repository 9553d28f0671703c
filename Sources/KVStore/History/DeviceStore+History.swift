import Foundation

/// The store's history (docs/history.md): every version of every key within
/// the store's retention, read from the device folders' journals when asked
/// for, and written again as a new version by ``restore(_:forKey:)``.
extension DeviceStore {
    /// The store's retention: the setting with the greatest stamp among the
    /// device folders (read again at most once a second), or the default.
    public var retention: HistoryRetention { engine.withLock { $0.retention() } }

    /// Sets the store's retention, for every device: written, stamped, in
    /// this device's folder, where the others read it (the greatest stamp wins).
    public func setRetention(_ retention: HistoryRetention) throws(KVStoreError) {
        try engine.withLock { state throws(KVStoreError) in try state.setRetention(retention) }
    }

    /// Every key with a version within the retention, removed keys included, in UTF-8 order.
    public var historyKeys: [StoreKey] { engine.withLock { $0.historyKeys() } }

    /// The versions of `key` within the retention, oldest first, without
    /// their values (``value(of:)`` reads one). `withDelivery`, the current
    /// one says which devices have read it (``KeyVersion/deliveredTo``, as
    /// ``deliveredTo(key:)``, asking for it while an active device has not);
    /// listings that do not show it (`.kvfs/history`) leave it out.
    public func history(forKey key: StoreKey, withDelivery: Bool = true) -> [KeyVersion] {
        guard withDelivery else { return engine.withLock { $0.keyVersions(of: key) } }
        let folders = survey.survey()
        let (versions, inputs) = engine.withLock { ($0.keyVersions(of: key), $0.statusInputs(present: folders.keys)) }
        return versions.map { version in
            guard version.isCurrent else { return version }
            var current = version
            current.deliveredTo = devices(thatHaveRead: version.stamp, inputs: inputs, folders: folders).map(\.name)
            return current
        }
    }

    /// What changes whenever some key's history may have: a listing made
    /// under one revision holds until the revision moves.
    public var historyRevision: HistoryRevision {
        engine.withLock { state in
            HistoryRevision(versions: state.history.revision, merge: state.merged.revision, names: state.folders.namesRevision,
                            retention: state.retention())
        }
    }

    /// The version of `key` that history names `name` (``KeyVersion/name``), if it is within the retention.
    public func version(named name: String, ofKey key: StoreKey) -> KeyVersion? {
        history(forKey: key, withDelivery: false).first { $0.name == name }
    }

    /// The value of a version, read from the journal that holds it; nil for a removal.
    ///
    /// - Throws: ``KVStoreError/noSuchVersion(key:reason:)`` when no folder holds it any more.
    public func value(of version: KeyVersion) throws(KVStoreError) -> PropertyListValue? {
        guard !version.isRemoval else { return nil }
        // Its folder may have been compacted since it was listed: then its new place is looked up once more.
        for attempt in 0..<2 {
            if attempt > 0 {
                compactor.waitUntilIdle()
                refresh()
            }
            guard let place = engine.withLock({ $0.location(of: version.key, stamp: version.stamp) }) else { break }
            if let record = StoredRecord(key: version.key, stamp: version.stamp, folder: place.folder, location: place.location).read(),
               case let .put(_, value) = record.operation {
                return value
            }
        }
        throw .noSuchVersion(key: version.key, reason: "version \(version.name) is no longer in its history")
    }

    /// The file form of a version's value, as `.kvfs/history/KEYFILE/NAME` shows it; empty for a removal.
    public func content(of version: KeyVersion) throws(KVStoreError) -> [UInt8] {
        try value(of: version).map(FileForm.encode) ?? []
    }

    /// Writes `version` as `key`'s new version, as Vault's rollback does: its
    /// value (or, for a removal, the key's removal) written now by this
    /// device, which syncs as any write does.
    public func restore(_ version: KeyVersion, forKey key: StoreKey) throws(KVStoreError) {
        if version.isRemoval {
            guard entry(forKey: key) != nil else {
                throw .noSuchVersion(key: key, reason: "'\(key)' is removed already")
            }
            try removeValue(forKey: key)
        } else {
            guard let value = try value(of: version) else { return }
            try set(value, forKey: key)
        }
    }

    /// Writes the newest value `key` had before it was removed as its new
    /// version (`kvfs undelete`), and returns the version restored.
    public func undelete(_ key: StoreKey) throws(KVStoreError) -> KeyVersion {
        try QuotaUsage.checkKey(key)
        guard entry(forKey: key) == nil else {
            throw .noSuchVersion(key: key, reason: "'\(key)' is not removed (`kvfs restore` brings back any version)")
        }
        guard let newest = history(forKey: key, withDelivery: false).last(where: { !$0.isRemoval }) else {
            throw .noSuchVersion(key: key, reason: "its history holds no value of it (`kvfs history \(key)` lists what it holds)")
        }
        try restore(newest, forKey: key)
        return newest
    }
}

/// What a key's history listing was made under (``DeviceStore/historyRevision``).
public struct HistoryRevision: Equatable, Sendable {
    let versions: UInt64, merge: UInt64
    /// The devices' names, which name the versions.
    let names: UInt64
    let retention: HistoryRetention
}
