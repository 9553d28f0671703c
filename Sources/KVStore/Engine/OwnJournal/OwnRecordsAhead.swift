/// This device's own records stamped past its clock's horizon
/// (``HybridLogicalClock/horizon()``, 24 hours ahead of its wall clock):
/// written while its clock was wrong (`faketime`, a clock set a year ahead
/// and then put right), or by another program writing into its folder.
///
/// Followed, such a stamp would carry every later write of this device past
/// the other devices' horizons, where they hold it back (its writes would
/// reach no one), or, at the reader's limit, make every write fail. So they
/// neither move the clock nor merge; the store rewrites them instead
/// (``EngineState/rewriteOwnRecordsAhead()``): their operations appended
/// again in their order, stamped now, then a compaction that leaves the old
/// stamps out of the folder. The rule, in docs/sync.md § Stamps from the
/// future: such a record counts as written when this device rewrites it, so
/// it wins over what was written before that (as its stamp said it would),
/// and every write made after it wins over it.
struct OwnRecordsAhead {
    /// The records waiting to be rewritten, in stamp order.
    private(set) var waiting: [JournalRecord] = []
    /// The latest stamp of this device's that was past the horizon when read
    /// (a record's, or a snapshot's closing one).
    private(set) var latest: HLCTimestamp?
    /// What the last rewrite did, once one ran.
    private(set) var rewrite: Rewrite?

    /// A rewrite: how many records it appended again, and the stamp of the first (nil for none).
    struct Rewrite {
        var count: Int
        var at: HLCTimestamp?
    }

    /// Notes what a read of this device's folder found past the horizon:
    /// `records`, and `latest` (the batch's latest own stamp, when past it),
    /// after what it noted before, or instead of it when the read replaces
    /// all the folder's records (a snapshot).
    mutating func note(_ records: [JournalRecord], latest: HLCTimestamp?, replacing: Bool) {
        let ahead = records.filter { if case .snapshotEnd = $0.operation { false } else { true } }
        waiting = ((replacing ? [] : waiting) + ahead).sorted { $0.stamp < $1.stamp }
        guard let found = (ahead.map(\.stamp.time) + [latest].compactMap { $0 }).max() else { return }
        self.latest = max(self.latest ?? found, found)
        rewrite = nil
    }

    /// Whether the folder holds stamps past the horizon that no rewrite has taken out yet.
    var isDue: Bool { latest != nil && rewrite == nil }

    /// Notes that the records waiting were appended again as `records` (and the folder is being compacted).
    mutating func rewritten(_ records: [JournalRecord]) {
        rewrite = Rewrite(count: records.count, at: records.first?.stamp.time)
        waiting = []
    }

    /// What happened, for the status and the log, of the folder at `folder`; nil when nothing did.
    func warning(device: DeviceID, folder: String) -> SyncWarning? {
        guard let latest else { return nil }
        let found = "\(folder) \(rewrite == nil ? "holds" : "held") records of this device stamped up to \(latest), more than "
            + "\(HybridLogicalClock.maximumOffset / 3_600_000) hours ahead of its clock: the clock was wrong when "
            + "they were written, or another program wrote into that folder"
        if let rewrite {
            let rewritten = rewrite.at.map { "rewrote \(rewrite.count) of them stamped \($0) and " } ?? ""
            return SyncWarning(kind: .ownRecordsAhead, device: device.hex, file: folder, message: """
                \(found); this device \(rewritten)compacted its folder, which now holds none of those stamps, so that \
                the other devices take its writes and its later writes win over the earlier ones
                """, fix: """
                nothing more to do if this machine's clock is right now (check with `date`; `timedatectl set-ntp true` \
                keeps it right); the other devices take the rewritten folder as it reaches them
                """)
        }
        return SyncWarning(kind: .ownRecordsAhead, device: device.hex, file: folder, message: """
            \(found); \(waiting.count) of them \(waiting.count == 1 ? "is" : "are") not shown, and the other devices hold them back
            """, fix: """
            with this machine's clock right (`date`), mount this store or write any key (`kvfs set`): this device \
            then rewrites them stamped at that time, so that every device takes them and later writes win over them
            """)
    }
}
