import Foundation

/// One entry of a device's journal (or snapshot): what changed, stamped by who and when.
public struct JournalRecord: Equatable, Sendable {
    /// What a record does.
    public enum Operation: Equatable, Sendable {
        /// `key` now holds `value`.
        case put(key: StoreKey, value: PropertyListValue)
        /// `key` is gone (a tombstone).
        case remove(key: StoreKey)
        /// `from` is gone and `to` holds `value`, in one step.
        case rename(from: StoreKey, to: StoreKey, value: PropertyListValue)
        /// Closes a snapshot file: it holds exactly `count` records before this one.
        case snapshotEnd(count: UInt32)
        /// Each of `puts` (distinct keys) holds its value, in one step (`kvfs
        /// import`): one record, so every reader, and a crash, sees all of them or none.
        case batch(puts: [Put])
    }

    /// One key's new value in a ``Operation/batch(puts:)``, with its place in the
    /// quota rule's order when that is not the record's stamp (``rank``).
    public struct Put: Equatable, Sendable {
        /// The key.
        public var key: StoreKey
        /// Its new value.
        public var value: PropertyListValue
        /// Its place in the quota rule's order, as a put's ``JournalRecord/rank``.
        public var rank: Stamp?

        /// A key's new value, ranked `rank`.
        public init(key: StoreKey, value: PropertyListValue, rank: Stamp? = nil) {
            self.key = key
            self.value = value
            self.rank = rank
        }
    }

    /// When and by whom.
    public var stamp: Stamp
    /// What.
    public var operation: Operation
    /// Where the value a put or rename stores stands in the quota rule's
    /// oldest-first order, when that is not `stamp`: an overwrite of a
    /// visible key keeps the place the key held, so it never needs room the
    /// old value did not take (`QuotaRule`). A batch ranks each of its
    /// values itself (``Put/rank``).
    public var rank: Stamp?
    /// What the writer had as the current version of each key the record
    /// changes, in the order of ``changes`` (docs/sync.md § Conflicts):
    /// ``WriteBase/unknown`` for records of formats 1 and 2.
    public var bases: [WriteBase]

    /// A record from its parts; `bases` defaults to unknown for every key it changes.
    public init(stamp: Stamp, operation: Operation, rank: Stamp? = nil, bases: [WriteBase]? = nil) {
        self.stamp = stamp
        self.operation = operation
        self.rank = rank
        self.bases = bases ?? Array(repeating: .unknown, count: operation.keys.count)
    }

    /// Whether it is a snapshot end, which closes a snapshot, or in a
    /// segment, the segment: its device went on in the next one as it began
    /// a compaction (docs/format.md § Compaction).
    var closesSegment: Bool {
        if case .snapshotEnd = operation { true } else { false }
    }

    /// The key changes this record makes: each key with its new value, or nil for removed.
    public var changes: [(key: StoreKey, value: PropertyListValue?)] {
        switch operation {
        case let .put(key, value): [(key, value)]
        case let .remove(key): [(key, nil)]
        case let .rename(from, to, value): [(from, nil), (to, value)]
        case .snapshotEnd: []
        case let .batch(puts): puts.map { ($0.key, $0.value) }
        }
    }

    /// ``changes``, each with its base (unknown where ``bases`` does not say) and its value's rank.
    var changesWithBases: [(key: StoreKey, value: PropertyListValue?, base: WriteBase, rank: Stamp?)] {
        changes.enumerated().map { index, change in (change.key, change.value, base(ofChange: index), rank(ofChange: index)) }
    }

    /// The rank of the value the `index`th of ``changes`` stores; nil for a removal.
    func rank(ofChange index: Int) -> Stamp? {
        switch operation {
        case let .batch(puts): puts[index].rank
        case .put, .rename: changes[index].value == nil ? nil : rank
        case .remove, .snapshotEnd: nil
        }
    }

    /// The `index`th of ``changes`` as a record of its own (a put or a
    /// removal), with its stamp, base and rank: how a snapshot keeps one
    /// key's version of a rename or a batch.
    func change(_ index: Int) -> JournalRecord {
        let (key, value) = changes[index]
        return JournalRecord(stamp: stamp, operation: value.map { .put(key: key, value: $0) } ?? .remove(key: key),
                             rank: rank(ofChange: index), bases: [base(ofChange: index)])
    }

    /// The base of the `index`th of ``changes``; unknown where ``bases`` does not say.
    func base(ofChange index: Int) -> WriteBase {
        bases.indices.contains(index) ? bases[index] : .unknown
    }
}

extension JournalRecord.Operation {
    /// The keys the operation changes, in the order of ``JournalRecord/changes``.
    var keys: [StoreKey] {
        switch self {
        case let .put(key, _), let .remove(key): [key]
        case let .rename(from, to, _): [from, to]
        case .snapshotEnd: []
        case let .batch(puts): puts.map(\.key)
        }
    }

    /// The keys a put or a batch sets, with their values: what the quota
    /// checks as it writes them (a rename's target is checked by ``DeviceStore/rename(_:to:replace:)``).
    var puts: [(key: StoreKey, value: PropertyListValue)] {
        switch self {
        case let .put(key, value): [(key, value)]
        case let .batch(puts): puts.map { ($0.key, $0.value) }
        case .remove, .rename, .snapshotEnd: []
        }
    }
}
