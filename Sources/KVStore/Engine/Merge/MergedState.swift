/// A key's current value as the store shows it.
public struct KeyEntry: Sendable, Equatable {
    /// The value.
    public let value: PropertyListValue
    /// Its file form: what `cat` prints; its count is the value's size for quota.
    public let content: [UInt8]
    /// Who wrote it and when (its mtime on every device).
    public let stamp: Stamp
    /// Its place in the quota rule's order (``JournalRecord/rank``).
    let rank: Stamp

    /// An entry for a value, computing its file form.
    public init(value: PropertyListValue, stamp: Stamp) {
        self.init(value: value, stamp: stamp, rank: stamp)
    }

    init(value: PropertyListValue, stamp: Stamp, rank: Stamp) {
        self.value = value
        content = FileForm.encode(value)
        self.stamp = stamp
        self.rank = rank
    }

    /// The value's size in bytes.
    public var size: Int { content.count }
}

/// One device's newest record for one key: a value, or nil for a tombstone.
struct Version: Sendable, Equatable {
    let stamp: Stamp
    let value: PropertyListValue?
    /// The value's place in the quota rule's order.
    let rank: Stamp
    /// What its writer had as the key's current version (``WriteBase``).
    let base: WriteBase

    init(stamp: Stamp, value: PropertyListValue?, rank: Stamp? = nil, base: WriteBase = .unknown) {
        self.stamp = stamp
        self.value = value
        self.rank = rank ?? stamp
        self.base = base
    }

    /// Last-writer-wins: the greater stamp. Two different records with one
    /// stamp (only a device id cloned with its state directory, or a hostile
    /// folder, writes them) are ordered by content (a put over a tombstone,
    /// then by the value's bytes, then by rank) so that the merge stays order-independent.
    func beats(_ other: Version) -> Bool {
        if stamp != other.stamp { return stamp > other.stamp }
        switch (value, other.value) {
        case let (mine?, theirs?):
            let (myBytes, theirBytes) = (RecordCodec.valueBytes(mine), RecordCodec.valueBytes(theirs))
            return myBytes == theirBytes ? rank > other.rank : theirBytes.lexicographicallyPrecedes(myBytes)
        case (.some, nil): return true
        default: return false
        }
    }
}

/// The winning record of a key, with its value's file form ready.
struct Winner: Sendable {
    let stamp: Stamp
    /// The value, or nil for a tombstone.
    let value: KeyEntry?
    /// What its writer had as the key's current version.
    let base: WriteBase

    init(_ version: Version) {
        stamp = version.stamp
        value = version.value.map { KeyEntry(value: $0, stamp: version.stamp, rank: version.rank) }
        base = version.base
    }

    var version: Version { Version(stamp: stamp, value: value?.value, rank: value?.rank, base: base) }
}

/// A value this device wrote that another device's concurrent write replaced
/// as its key's winner: the writer of the new version had not seen it
/// (docs/sync.md § Conflicts).
struct LostWrite: Sendable, Equatable {
    let key: StoreKey
    /// The stamp of this device's value that lost.
    let lost: Stamp
    /// The stamp of the version that replaced it.
    let winner: Stamp
}

/// The last-writer-wins merge of the records in every device's folder, with
/// the quota rule (``QuotaRule``) on top.
///
/// It keeps each folder's newest record per key, as read from that folder's
/// current files; per key the greatest of those wins, a removal being a
/// tombstone that wins like any write. A folder holds the records its device
/// stamped, and in its snapshot the records it adopted from a retired or
/// vanished device, with their original stamps. The store is therefore a
/// function of the files alone: adding records in any order, any number of
/// times, gives the same store, and when a device compacts (its snapshot
/// replacing what came before, ``replace(recordsIn:with:)``), every reader
/// ends with what a fresh reader of the new files computes — which is what
/// lets every device converge once they have read the same files, collected
/// tombstones included.
struct MergedState {
    /// The device whose writes that lose to concurrent ones are noted in ``lostWrites``: the store's own.
    let owner: DeviceID?
    /// Per folder (by its device), its newest record for each key.
    private(set) var folders: [DeviceID: [StoreKey: Version]] = [:]
    /// Per key, the winning record.
    private(set) var winners: [StoreKey: Winner] = [:]
    /// The keys the store shows, after the quota rule.
    private(set) var visible: [StoreKey: KeyEntry] = [:]
    /// Live winners the quota rule leaves out.
    private(set) var setAside: Set<StoreKey> = []
    /// What the visible keys use.
    private(set) var usage = QuotaUsage()
    /// The owner's values that concurrent writes replaced as their key's winner, since ``takeLostWrites()``.
    private(set) var lostWrites: [LostWrite] = []
    /// Changes with every merge, so that what is worked out from the winners can be kept until then.
    private(set) var revision: UInt64 = 0

    /// An empty merge, noting the lost writes of `owner` (none when nil).
    init(owner: DeviceID? = nil) {
        self.owner = owner
    }

    /// Merges records read from (or appended to) `folder`; returns the keys whose visible value changed.
    mutating func apply(_ records: [JournalRecord], in folder: DeviceID) -> Set<StoreKey> {
        revision &+= 1
        var touched: Set<StoreKey> = []
        for record in records {
            for (key, version) in keepNewest(record, in: folder) {
                if let winner = winners[key], !version.beats(winner.version) { continue }
                noteIfLost(key, winners[key]?.version, replacedBy: version)
                winners[key] = Winner(version)
                touched.insert(key)
            }
        }
        return updateVisible(touched)
    }

    /// Replaces everything read from `folder` by `records` (its new snapshot
    /// and what followed it); returns the keys whose visible value changed.
    mutating func replace(recordsIn folder: DeviceID, with records: [JournalRecord]) -> Set<StoreKey> {
        revision &+= 1
        var touched = Set((folders.removeValue(forKey: folder) ?? [:]).keys)
        for record in records {
            touched.formUnion(keepNewest(record, in: folder).map(\.key))
        }
        for key in touched {
            let best = folders.values.compactMap { $0[key] }.reduce(nil) { best, version in
                best.map { version.beats($0) ? version : $0 } ?? version
            }
            if best != winners[key]?.version {
                noteIfLost(key, winners[key]?.version, replacedBy: best)
                winners[key] = best.map(Winner.init)
            }
        }
        return updateVisible(touched)
    }

    /// Drops `folder`'s records stamped up to `time` (another folder adopted
    /// them); returns the keys whose visible value changed.
    mutating func forget(recordsIn folder: DeviceID, upTo time: HLCTimestamp) -> Set<StoreKey> {
        let versions = folders[folder] ?? [:]
        guard versions.values.contains(where: { $0.stamp.time <= time }) else { return [] }
        return replace(recordsIn: folder, with: versions.compactMap { key, version in
            version.stamp.time > time ? Self.record(key, version) : nil
        })
    }

    /// The lost writes noted since the last call, forgotten here.
    mutating func takeLostWrites() -> [LostWrite] {
        defer { lostWrites = [] }
        return lostWrites
    }

    /// Notes the owner's value `old` as lost when `new`, another device's
    /// version that beats it, was written without its writer having seen it.
    private mutating func noteIfLost(_ key: StoreKey, _ old: Version?, replacedBy new: Version?) {
        guard let owner, let old, let new, old.stamp.device == owner, old.value != nil, new.stamp.device != owner,
              new.beats(old), new.base.isConcurrent(with: old.stamp) else { return }
        lostWrites.append(LostWrite(key: key, lost: old.stamp, winner: new.stamp))
    }

    /// Notes `record`'s changes as its folder's newest where they are; returns those.
    private mutating func keepNewest(_ record: JournalRecord, in folder: DeviceID) -> [(key: StoreKey, version: Version)] {
        record.changesWithBases.compactMap { key, value, base, rank in
            let version = Version(stamp: record.stamp, value: value, rank: rank, base: base)
            if let newest = folders[folder]?[key], !version.beats(newest) { return nil }
            folders[folder, default: [:]][key] = version
            return (key, version)
        }
    }

    /// Brings `visible` up to date after the winners of `touched` changed.
    private mutating func updateVisible(_ touched: Set<StoreKey>) -> Set<StoreKey> {
        guard !touched.isEmpty else { return [] }
        if setAside.isEmpty, let usage = QuotaRule.usage(usage, replacing: touched, of: visible, by: winners) {
            // Everything fits, as it did before: what oldest-first admits anyway.
            let changed = touched.filter { visible[$0] != winners[$0]?.value }
            for key in changed { visible[key] = winners[key]?.value }
            self.usage = usage
            return changed
        }
        let admitted = QuotaRule.admitOldestFirst(winners)
        let changed = Set(admitted.visible.keys).union(visible.keys).filter { admitted.visible[$0] != visible[$0] }
        (visible, setAside, usage) = (admitted.visible, admitted.setAside, admitted.usage)
        return changed
    }

    /// The records of `folder` that win their key: what its snapshot keeps
    /// (before tombstone collection). Its records beaten by another folder's
    /// newer record are left out: the newer one stands for them.
    func records(inFolder folder: DeviceID) -> [JournalRecord] {
        (folders[folder] ?? [:]).compactMap { key, version in
            winners[key]?.stamp == version.stamp ? Self.record(key, version) : nil
        }
        .sorted { ($0.stamp, $0.changes[0].key) < ($1.stamp, $1.changes[0].key) }
    }

    /// Whether a folder other than `folder` holds `record` (same key and stamp).
    func holds(_ record: JournalRecord, outside folder: DeviceID) -> Bool {
        guard let key = record.changes.first?.key else { return false }
        return folders.contains { $0.key != folder && $0.value[key]?.stamp == record.stamp }
    }

    /// The record that stores `version` of `key`.
    static func record(_ key: StoreKey, _ version: Version) -> JournalRecord {
        let operation: JournalRecord.Operation = version.value.map { .put(key: key, value: $0) } ?? .remove(key: key)
        return JournalRecord(stamp: version.stamp, operation: operation, rank: version.rank == version.stamp ? nil : version.rank,
                             bases: [version.base])
    }
}
