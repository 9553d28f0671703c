/// What a record payload holds: the byte after its header (``RecordCodec``).
///
/// The values are the on-disk format (docs/format.md § Records): journals and
/// snapshots written by every earlier version hold them, so they never change
/// and are never reused.
enum RecordKind: UInt8, CaseIterable {
    /// ``JournalRecord/Operation/put(key:value:)``: a key, then its value.
    case put = 1
    /// ``JournalRecord/Operation/remove(key:)``: a key.
    case remove = 2
    /// ``JournalRecord/Operation/rename(from:to:value:)``: two keys, then the value.
    case rename = 3
    /// ``JournalRecord/Operation/snapshotEnd(count:)``: a `u32` record count.
    case snapshotEnd = 4
    /// ``JournalRecord/Operation/batch(puts:)``: a `u32` count, then that many
    /// (key, value, rank) entries. Versions before it skip such a record (docs/format.md § Batches).
    case batch = 5

    /// The kind of `operation`.
    init(_ operation: JournalRecord.Operation) {
        switch operation {
        case .put: self = .put
        case .remove: self = .remove
        case .rename: self = .rename
        case .snapshotEnd: self = .snapshotEnd
        case .batch: self = .batch
        }
    }

    /// Whether a record of this kind stores one value, and so may carry a
    /// rank (``JournalRecord/rank``) after its bases; a batch ranks each of its values in its entries.
    var storesValue: Bool { self == .put || self == .rename }
}
