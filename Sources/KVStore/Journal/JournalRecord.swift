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
    /// old value did not take (``QuotaRule``).
    public var rank: Stamp?

    /// A record from its parts.
    public init(stamp: Stamp, operation: Operation, rank: Stamp? = nil) {
        self.stamp = stamp
        self.operation = operation
        self.rank = rank
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
}
