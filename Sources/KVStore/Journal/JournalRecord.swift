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
    }

    /// When and by whom.
    public var stamp: Stamp
    /// What.
    public var operation: Operation
    /// Where the value a put or rename stores stands in the quota rule's
    /// oldest-first order, when that is not `stamp`: an overwrite of a
    /// visible key keeps the place the key held, so it never needs room the
    /// old value did not take (`QuotaRule`).
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

    /// The key changes this record makes: each key with its new value, or nil for removed.
    public var changes: [(key: StoreKey, value: PropertyListValue?)] {
        switch operation {
        case let .put(key, value): [(key, value)]
        case let .remove(key): [(key, nil)]
        case let .rename(from, to, value): [(from, nil), (to, value)]
        case .snapshotEnd: []
        }
    }

    /// ``changes``, each with its base (unknown where ``bases`` does not say).
    var changesWithBases: [(key: StoreKey, value: PropertyListValue?, base: WriteBase)] {
        changes.enumerated().map { index, change in (change.key, change.value, base(ofChange: index)) }
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
        }
    }
}
