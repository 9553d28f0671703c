/// Which versions a store's history keeps: one pure function of the versions
/// the device folders hold, the store's ``HistoryRetention`` and the time, so
/// that devices that have read the same files keep, compact and list the
/// same versions (docs/history.md).
///
/// - A key's current value (the version that wins it) is always kept.
/// - Every other version (an overwritten value, a removal, a write that lost
///   to a concurrent one) is kept while it is younger than `days` and within
///   the budget of `bytes`, counted newest first across the whole store: the
///   oldest go first. Each version counts what its record takes in a
///   snapshot (``charge(key:value:base:rank:)``): its key, its value and the
///   record's framing, stamp, base and rank. So the versions a device's
///   snapshot keeps besides current values (its history part) take at most
///   `bytes` on disk, whatever the keys' and values' sizes: a budget of value
///   bytes alone let long keys with short values make a snapshot of 20 MB
///   out of "8 MiB" of history.
///
/// Both limits cut the versions, newest first, at one point each, so a
/// version is kept only if every newer version of the store that is not a
/// current value is kept too. A compaction relies on that: dropping a
/// folder's newest record of a key always drops its older ones with it (see
/// ``Compactor/snapshot(of:adding:)``). A device that has not read every
/// folder yet sees fewer versions and so keeps more of the older ones: never less than
/// the others keep.
enum RetentionRule {
    /// What a version counts against the budget: the bytes of its record in
    /// a snapshot, frame included (``RecordFrame/size(ofVersionOf:value:base:rank:)``),
    /// the same on every device whatever record first held it (a rename's
    /// or a batch's is split per key there, and a record of format 1 or 2 is written in format 3).
    static func charge(key: StoreKey, value: PropertyListValue?, base: WriteBase, rank: Stamp?) -> Int {
        RecordFrame.size(ofVersionOf: key, value: value, base: base, rank: rank)
    }

    /// What is kept of the versions that are not a key's current value.
    struct Floor: Equatable, Sendable {
        /// Whether any is kept (history is on).
        var keepsAny: Bool
        /// The oldest time kept.
        var oldest: HLCTimestamp
        /// The newest stamp past the budget: versions stamped up to it are not kept.
        var overBudget: Stamp?

        /// History off: none is kept.
        static let none = Floor(keepsAny: false, oldest: .latest, overBudget: nil)

        /// Whether a version stamped `stamp` that is not a current value is kept.
        func keeps(_ stamp: Stamp) -> Bool {
            keepsAny && stamp.time >= oldest && overBudget.map { stamp > $0 } ?? true
        }
    }

    /// A version that is not a key's current value: its stamp and what it counts (``charge(key:value:base:rank:)``).
    struct Candidate {
        var stamp: Stamp
        var charge: Int
    }

    /// The floor of `retention` over `candidates` (each version once) at `now`
    /// (milliseconds since 1970 on this device's wall clock).
    static func floor(of candidates: [Candidate], retention: HistoryRetention, now: UInt64) -> Floor {
        guard !retention.isOff else { return .none }
        return Floor(keepsAny: true, oldest: oldestKept(days: retention.days, now: now),
                     overBudget: overBudget(candidates, bytes: retention.bytes))
    }

    /// The oldest time `days` keeps at `now`.
    static func oldestKept(days: Int, now: UInt64) -> HLCTimestamp {
        let (age, overflow) = UInt64(days).multipliedReportingOverflow(by: 86_400_000)
        return overflow || age >= now ? HLCTimestamp(rawValue: 0) : HLCTimestamp(milliseconds: now - age, counter: 0)
    }

    /// The newest stamp of `candidates` that, counted newest first, passes
    /// `bytes`; nil when they all fit.
    static func overBudget(_ candidates: [Candidate], bytes: Int) -> Stamp? {
        var total = 0
        for candidate in candidates.sorted(by: { $0.stamp > $1.stamp }) {
            total += candidate.charge
            if total > bytes { return candidate.stamp }
        }
        return nil
    }
}
