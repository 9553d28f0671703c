/// A key's current value as the store shows it.
public struct KeyEntry: Sendable, Equatable {
    /// The value.
    public let value: PropertyListValue
    /// Its file form: what `cat` prints; its count is the value's size for quota.
    public let content: [UInt8]
    /// Who wrote it and when (its mtime on every device).
    public let stamp: Stamp

    /// An entry for a value, computing its file form.
    public init(value: PropertyListValue, stamp: Stamp) {
        self.value = value
        content = FileForm.encode(value)
        self.stamp = stamp
    }

    /// The value's size in bytes.
    public var size: Int { content.count }
}

/// The last-writer-wins merge of every device's records, with the quota rule on top.
///
/// Per key the record with the greatest stamp wins; a removal is a tombstone
/// that wins like any write. Applying records in any order, any number of
/// times, gives the same winners.
///
/// Quota under concurrency: when the winners together pass a limit (which
/// only concurrent writes on several devices can cause, as each device checks
/// its own writes), the store admits them oldest stamp first and sets aside
/// each that would pass a limit — what one server receiving the writes in
/// stamp order would have refused. The rule depends only on the winners, so
/// every device computes the same store. A set-aside value comes back if room
/// is made for it later.
struct MergedState {
    /// Per key, the winning record: a value, or nil for a tombstone.
    private(set) var winners: [String: (value: KeyEntry?, stamp: Stamp)] = [:]
    /// The keys the store shows.
    private(set) var visible: [String: KeyEntry] = [:]
    /// Live winners left out by the quota rule.
    private(set) var setAside: Set<String> = []
    /// What the visible keys use.
    private(set) var usage = QuotaUsage()

    /// Merges records; returns the keys whose visible value changed.
    mutating func apply(_ records: [JournalRecord]) -> Set<String> {
        var touched: Set<String> = []
        for record in records {
            for (key, value) in record.changes {
                if let current = winners[key], current.stamp >= record.stamp { continue }
                winners[key] = (value.map { KeyEntry(value: $0, stamp: record.stamp) }, record.stamp)
                touched.insert(key)
            }
        }
        return touched.isEmpty ? [] : updateVisible(touched)
    }

    private mutating func updateVisible(_ touched: Set<String>) -> Set<String> {
        var changed: Set<String> = []
        var fits = setAside.isEmpty
        var next = usage
        if fits {
            for key in touched {
                let old = visible[key]
                let new = winners[key]?.value
                next.keys += (new == nil ? 0 : 1) - (old == nil ? 0 : 1)
                next.bytes += (new?.size ?? 0) - (old?.size ?? 0)
            }
            fits = next.isWithinLimits
        }
        if fits {
            for key in touched where visible[key] != winners[key]?.value {
                visible[key] = winners[key]?.value
                changed.insert(key)
            }
            usage = next
            return changed
        }
        return admitInStampOrder()
    }

    /// The quota rule, from scratch: oldest first, each live winner that fits is admitted.
    private mutating func admitInStampOrder() -> Set<String> {
        let live = winners.compactMap { key, winner in winner.value.map { (key, $0) } }.sorted { $0.1.stamp < $1.1.stamp }
        var admitted: [String: KeyEntry] = [:]
        var total = QuotaUsage()
        var excluded: Set<String> = []
        for (key, entry) in live {
            if (try? total.checkWrite(key: key, oldSize: nil, newSize: entry.size)) != nil {
                admitted[key] = entry
                total.keys += 1
                total.bytes += entry.size
            } else {
                excluded.insert(key)
            }
        }
        let changed = Set(admitted.keys).symmetricDifference(visible.keys)
            .union(admitted.keys.filter { admitted[$0] != visible[$0] })
        visible = admitted
        setAside = excluded
        usage = total
        return changed
    }

    /// This device's records still in force: what its snapshot keeps.
    func records(writtenBy device: DeviceID) -> [JournalRecord] {
        winners.compactMap { key, winner in
            guard winner.stamp.device == device else { return nil }
            let operation: JournalRecord.Operation = winner.value.map { .put(key: key, value: $0.value) } ?? .remove(key: key)
            return JournalRecord(stamp: winner.stamp, operation: operation)
        }
        .sorted { $0.stamp < $1.stamp }
    }
}
