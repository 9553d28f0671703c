/// Quota under concurrency: what the store shows when the winners of all
/// devices together pass a limit.
///
/// Each device checks its own writes against the store it sees, so only
/// writes made concurrently on several devices can together pass a limit (the
/// 1024 keys or the 1,048,576 bytes). Then every device admits the live
/// winners oldest first (ties by key) and sets aside each one that would pass
/// a limit, which is what one server receiving the writes in stamp order
/// would have refused. "Oldest" is a value's rank (``JournalRecord/rank``):
/// its stamp, except that an overwrite of a visible key keeps the rank of the
/// value it replaces, as that server keeps a key in the room it holds, so a
/// write that fits what the store shows is admitted whatever is set aside.
/// The rule depends only on the winners, so every device computes the same
/// store. A set-aside value is not lost: it comes back, in its place, as soon
/// as the values before it leave it room, and a later value that then no
/// longer fits is set aside in its turn.
enum QuotaRule {
    /// What the store shows, and what it sets aside.
    struct Admitted {
        var visible: [StoreKey: KeyEntry] = [:]
        var setAside: Set<StoreKey> = []
        var usage = QuotaUsage()
    }

    /// The usage once the winners of `touched` replace what `visible` shows
    /// for them, or nil when that passes a limit.
    static func usage(_ usage: QuotaUsage, replacing touched: Set<StoreKey>, of visible: [StoreKey: KeyEntry],
                      by winners: [StoreKey: Winner]) -> QuotaUsage? {
        var next = usage
        for key in touched {
            let old = visible[key]
            let new = winners[key]?.value
            next.keys += (new == nil ? 0 : 1) - (old == nil ? 0 : 1)
            next.bytes += (new?.size ?? 0) - (old?.size ?? 0)
        }
        return next.isWithinLimits ? next : nil
    }

    /// The rule, from scratch: oldest rank first, each live winner that fits is admitted.
    static func admitOldestFirst(_ winners: [StoreKey: Winner]) -> Admitted {
        let live = winners.compactMap { key, winner in winner.value.map { (key: key, entry: $0) } }
            .sorted { ($0.entry.rank, $0.key) < ($1.entry.rank, $1.key) }
        var admitted = Admitted()
        for (key, entry) in live {
            if (try? admitted.usage.checkWrite(key: key, oldSize: nil, newSize: entry.size)) != nil {
                admitted.visible[key] = entry
                admitted.usage.keys += 1
                admitted.usage.bytes += entry.size
            } else {
                admitted.setAside.insert(key)
            }
        }
        return admitted
    }
}
