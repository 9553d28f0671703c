import Foundation
import KVStore
import Observation
import Synchronization

/// For each key read through an object's properties, how to tell that
/// property's observers that the key changed outside the object: the part of
/// precise observation both storages share.
///
/// A property registers when it is read (a property nobody read has no
/// observers to tell), so a change to `theme` calls `withMutation` for
/// `\.theme` only, and `withObservationTracking` observers of other
/// properties hear nothing. Announcing only calls the host's
/// `ObservationRegistrar`, which is thread-safe, so the host class itself need
/// not be `Sendable`; announcements may come on any thread.
public final class PropertyObservers: Sendable {
    /// One property's announcement. Unchecked Sendable for the reason above:
    /// the closure holds the host weakly and only calls its registrar.
    private struct Announcement: @unchecked Sendable {
        let announce: () -> Void
    }

    private let announcements = Mutex<[StoreKey: Announcement]>([:])

    /// Creates an empty table.
    public init() {}

    /// Tells observation that `host`'s property `keyPath` was read, and
    /// remembers that a change of `key` (the full key, prefix included) is a
    /// change of that property.
    public func access<Host: Observable & AnyObject, Value>(_ host: Host, _ keyPath: KeyPath<Host, Value>,
                                                            registrar: ObservationRegistrar, key: String) {
        registrar.access(host, keyPath: keyPath)
        let storeKey = StoreKey(key)
        guard announcements.withLock({ $0[storeKey] == nil }) else { return }
        let announcement = Announcement { [weak host] in
            guard let host else { return }
            registrar.withMutation(of: host, keyPath: keyPath) {}
        }
        announcements.withLock { if $0[storeKey] == nil { $0[storeKey] = announcement } }
    }

    /// The keys some property has been read under.
    public var keys: [StoreKey] { announcements.withLock { Array($0.keys) } }

    /// Tells the observers of the properties stored under `keys` (full keys) that they changed.
    public func announce<Keys: Sequence>(_ keys: Keys) where Keys.Element == StoreKey {
        let due = announcements.withLock { table in keys.compactMap { table[$0] } }
        for announcement in due { announcement.announce() }
    }
}
