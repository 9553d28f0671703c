import Foundation
@testable import KVStore

/// What the store must be once every record has been read, stated as simply
/// as possible and apart from the engine: per key the record with the
/// greatest (clock, device id) wins, a removal leaving nothing; then the live
/// winners are taken oldest rank first (a record's rank, or its stamp), each
/// only if the store still fits its limits with it.
final class ReferenceModel: @unchecked Sendable {
    private var records: [JournalRecord] = []
    private let lock = NSLock()

    /// Notes a record some device appended.
    func add(_ record: JournalRecord) { lock.withLock { records.append(record) } }

    /// How many records were written.
    var count: Int { lock.withLock { records.count } }

    /// Every record written, in the order the devices appended them.
    var written: [JournalRecord] { lock.withLock { records } }

    /// The store every device must show.
    func values() -> [StoreKey: PropertyListValue] {
        typealias Order = (UInt64, String)
        var winners: [StoreKey: (order: Order, rank: Order, value: PropertyListValue?)] = [:]
        for record in lock.withLock({ records }) {
            let order = (record.stamp.time.rawValue, record.stamp.device.hex)
            let rank = record.rank.map { ($0.time.rawValue, $0.device.hex) } ?? order
            for (key, value) in record.changes where winners[key].map({ $0.order < order }) ?? true {
                winners[key] = (order, rank, value)
            }
        }
        let live = winners.compactMap { key, winner in winner.value.map { (rank: winner.rank, key: key, value: $0) } }
            .sorted { ($0.rank.0, $0.rank.1, $0.key) < ($1.rank.0, $1.rank.1, $1.key) }
        var store: [StoreKey: PropertyListValue] = [:]
        var bytes = 0
        for (_, key, value) in live {
            let size = FileForm.encode(value).count
            if store.count < 1024 && bytes + size <= 1_048_576 {
                store[key] = value
                bytes += size
            }
        }
        return store
    }
}
