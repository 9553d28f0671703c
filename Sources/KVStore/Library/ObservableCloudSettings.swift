import Foundation
import Synchronization
import Observation

/// An observable settings object whose properties live in a key-value store,
/// in the spirit of ObservableDefaults' `@ObservableCloud`, without a macro.
///
/// Subclass it and mark properties:
/// - `@CloudBacked("key") var name = default`: stored under `prefix + "key"`,
///   observable, and updated (observers told) when another device changes the
///   key; when the key is missing, or removed, or holds something that is not
///   a `Value`, the property reads as its declared default.
///   (`@CloudKey(keyValueStoreKey: "key")` and `@CloudBacked(keyValueStoreKey:)`
///   are the same, spelled as ObservableDefaults spells them.)
/// - `@ObservableOnly var name = value`: observable, not stored.
/// - a plain `var`, or `@Ignore var`: neither.
///
/// ```swift
/// final class Settings: ObservableCloudSettings {
///     @CloudBacked("theme") var theme = "light"
///     @CloudBacked("fontSize") var fontSize = 14
///     @ObservableOnly var isEditing = false
/// }
/// let settings = Settings(prefix: "myApp.")                  // over UbiquitousKeyValueStore.default
/// let preview = Settings(developmentMode: true)              // over a store in memory
/// ```
///
/// Cloud-backed properties read the store each time, so they are never stale.
/// Like ObservableDefaults, writes made to the
/// store directly (not through a settings object) in this process are not
/// announced to observers, as Apple's store does not announce them either.
open class ObservableCloudSettings: Observable {
    /// The store the cloud-backed properties live in.
    public let store: any KeyValueStore
    /// Put in front of every cloud-backed property's key, to keep apps or settings objects apart.
    public let prefix: String
    /// Whether each write through a property is followed by the store's `synchronize()`.
    public let syncImmediately: Bool

    let registrar = ObservationRegistrar()
    private let relay = ChangeRelay()
    private let subscription: (any NSObjectProtocol)?

    /// Creates settings over a store, with ObservableDefaults' options.
    ///
    /// - Parameters:
    ///   - store: where the properties live. By default
    ///     ``UbiquitousKeyValueStore/default``, or in development mode a new
    ///     ``InMemoryKeyValueStore`` of this object's own.
    ///   - prefix: put in front of every cloud-backed property's key.
    ///   - syncImmediately: call the store's `synchronize()` after each write
    ///     through a property, so that the write is on disk and other devices'
    ///     news are read at once. (Writes reach the journal either way.)
    ///   - developmentMode: keep the properties in memory, not in the default
    ///     store: for previews and tests. Also on when the environment variable
    ///     `OBSERVABLE_DEFAULTS_DEV_MODE` is `true`, as in ObservableDefaults.
    ///     A `store` passed explicitly is used all the same.
    ///   - ignoreExternalChanges: do not tell observers when another device
    ///     changes a property's key. The property still reads the new value:
    ///     it reads the store each time.
    public init(store: (any KeyValueStore)? = nil, prefix: String = "", syncImmediately: Bool = false,
                developmentMode: Bool = false, ignoreExternalChanges: Bool = false) {
        let developing = developmentMode || ProcessInfo.processInfo.environment["OBSERVABLE_DEFAULTS_DEV_MODE"] == "true"
        let store = store ?? (developing ? InMemoryKeyValueStore() : UbiquitousKeyValueStore.default)
        self.store = store
        self.prefix = prefix
        self.syncImmediately = syncImmediately
        guard !ignoreExternalChanges else {
            subscription = nil
            return
        }
        // Synchronous (queue nil): observers hear of a change on the thread that posted it.
        subscription = NotificationCenter.default.addObserver(forName: AppleNames.didChangeExternally, object: store,
                                                              queue: nil) { [relay] notification in
            relay.announce(keys: notification.userInfo?[AppleNames.changedKeysKey] as? [String] ?? [])
        }
    }

    deinit { if let subscription { NotificationCenter.default.removeObserver(subscription) } }

    /// Tells observation that `property` was read and, for a cloud-backed one,
    /// remembers how to announce changes of its store key. (A property nobody
    /// read has no observers to tell.)
    func didAccess<Settings: ObservableCloudSettings, Member>(_ property: KeyPath<Settings, Member>, of settings: Settings,
                                                              storeKey: String? = nil) {
        registrar.access(settings, keyPath: property)
        guard let storeKey else { return }
        relay.remember(storeKey) { [weak settings] in
            guard let settings else { return }
            settings.registrar.withMutation(of: settings, keyPath: property) {}
        }
    }
}

/// For each store key read through a settings object, how to announce that
/// its property changed; called from the store's notification, on any thread.
///
/// Announcing only calls the ObservationRegistrar, which is thread-safe, so
/// the settings object itself need not be Sendable (and its subclasses need
/// not say `@unchecked Sendable`).
private final class ChangeRelay: Sendable {
    /// One property's announcement. Unchecked Sendable for the reason above:
    /// the closure holds the settings object weakly and only calls its registrar.
    private struct Announcement: @unchecked Sendable {
        let announce: () -> Void
    }

    private let announcements = Mutex<[StoreKey: Announcement]>([:])

    func remember(_ key: String, _ announce: @escaping () -> Void) {
        let announcement = Announcement(announce: announce)
        announcements.withLock { if $0[StoreKey(key)] == nil { $0[StoreKey(key)] = announcement } }
    }

    func announce(keys: [String]) {
        for announcement in announcements.withLock({ table in keys.compactMap { table[StoreKey($0)] } }) { announcement.announce() }
    }
}
