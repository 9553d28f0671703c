import Foundation
import Synchronization

/// A ``KeyValueStore`` in memory, for tests: the same API, typing and quota
/// rules as the sync-directory store (sizes are file-form sizes, checked by
/// ``QuotaUsage``), a fresh empty store per instance, ``reset()``, and
/// ``simulateExternalChange(_:reason:)`` to see how an app reacts to other devices.
///
/// Changes (simulated ones and quota refusals) are posted synchronously on
/// the calling thread, so a test can check its reaction right after the call.
/// Quota refusals are posted the same way by ``UbiquitousKeyValueStore``;
/// other devices' changes reach that one asynchronously, on a queue of its own.
public final class InMemoryKeyValueStore: KeyValueStore {
    /// Values with their sizes and the usage they add up to, kept together under one lock.
    private struct Contents {
        var values: [StoreKey: PropertyListValue] = [:]
        var sizes: [StoreKey: Int] = [:]
        var usage = QuotaUsage()

        mutating func put(_ value: PropertyListValue, forKey key: StoreKey, size: Int) {
            remove(key)
            values[key] = value
            sizes[key] = size
            usage.keys += 1
            usage.bytes += size
        }

        mutating func remove(_ key: StoreKey) {
            guard let size = sizes.removeValue(forKey: key) else { return }
            values[key] = nil
            usage.keys -= 1
            usage.bytes -= size
        }
    }

    private let contents = Mutex(Contents())
    private let broadcaster = ChangeBroadcaster()

    /// An empty store.
    public init() {}

    /// The value stored for `key`, or nil.
    public func value(forKey key: String) -> PropertyListValue? { contents.withLock { $0.values[StoreKey(key)] } }

    /// Every key and its value.
    public var values: [StoreKey: PropertyListValue] { contents.withLock { $0.values } }

    /// What the store uses against its limits.
    public var usage: QuotaUsage { contents.withLock { $0.usage } }

    /// Stores `value` for `key` after checking the key and the quota; a quota
    /// refusal changes nothing, posts QuotaViolationChange (before this
    /// returns, on the calling thread, as the sync-directory store does) and throws.
    public func setValue(_ value: PropertyListValue, forKey key: String) throws(KVStoreError) {
        let key = StoreKey(key)
        try QuotaUsage.checkKey(key)
        let size = FileForm.encode(value).count
        // Posted outside the lock: an observer may read the store.
        try broadcaster.postingQuotaRefusal(of: key, by: self) { () throws(KVStoreError) in
            try contents.withLock { (contents) throws(KVStoreError) in
                try contents.usage.checkWrite(key: key, oldSize: contents.sizes[key], newSize: size)
                contents.put(value, forKey: key, size: size)
            }
        }
    }

    /// Removes `key`'s value; removing a missing key does nothing.
    public func removeValue(forKey key: String) throws(KVStoreError) {
        let key = StoreKey(key)
        try QuotaUsage.checkKey(key)
        contents.withLock { $0.remove(key) }
    }

    /// Nothing to exchange in memory: always true.
    @discardableResult
    public func synchronize() -> Bool { true }

    /// Simulated external changes and quota refusals, as an async sequence.
    public var changes: AsyncStream<StoreChange> { broadcaster.subscribe() }

    /// Empties the store, without notifications.
    public func reset() { contents.withLock { $0 = Contents() } }

    /// Applies changes as if another device made them, then posts them like the
    /// sync-directory store does (notification and `changes`).
    ///
    /// - Parameters:
    ///   - changes: each key's new value; nil removes the key. Applied as
    ///     they come, without a quota check: the other device already passed it.
    ///   - reason: why, as Apple reports it; `.serverChange` by default.
    public func simulateExternalChange(_ changes: [StoreKey: PropertyListValue?], reason: ChangeReason = .serverChange) {
        contents.withLock { contents in
            for (key, value) in changes {
                if let value { contents.put(value, forKey: key, size: FileForm.encode(value).count) } else { contents.remove(key) }
            }
        }
        broadcaster.post(StoreChange(reason: reason, keys: Array(changes.keys)), from: self)
    }
}
