import Foundation
import KVStore
import Observation
import Synchronization

/// A class that `@ObservableCloud` expanded: what ``CloudObservation`` and the
/// property accessors reach. The macro writes the conformance and both
/// members; code never writes them by hand.
public protocol ObservableCloudObject: Observable, AnyObject {
    /// The registrar that tells observers of this object's properties.
    var _$observationRegistrar: ObservationRegistrar { get }
    /// Where this object's cloud-backed properties live.
    var _cloudStorage: ObservableCloudStorage { get }
}

/// One `@ObservableCloud` object's store and options: the runtime its
/// cloud-backed properties' accessors call (see
/// ``value(of:_:forKey:default:)`` and ``set(_:of:_:forKey:)``).
///
/// The store is `UbiquitousKeyValueStore.default` (this program's own store,
/// which other devices share through its sync directory), or in development
/// mode an `InMemoryKeyValueStore` of this object's own, or the one given.
/// It is opened at first use, so an object whose initializer replaces this
/// storage never opens the default store for nothing.
public final class ObservableCloudStorage: Sendable {
    /// Put in front of every property's key.
    public let prefix: String
    /// Whether each write through a property is followed by the store's `synchronize()`.
    public let syncImmediately: Bool
    /// Whether the properties live in memory (``isDevelopmentMode(_:)`` of the option given).
    public let developmentMode: Bool
    /// The properties read so far, to tell when another device changes their keys.
    public let observers = PropertyObservers()
    private let given: (any KeyValueStore)?
    private let opened = Mutex<(any KeyValueStore)?>(nil)

    /// Storage with `@ObservableCloud`'s options.
    ///
    /// - Parameters:
    ///   - prefix: put in front of every property's key.
    ///   - syncImmediately: call `synchronize()` after each write through a
    ///     property, so the write is on disk and other devices' news are read
    ///     at once. (Writes reach the device's journal either way.)
    ///   - developmentMode: keep the properties in a store in memory of this
    ///     object's own; on also when the environment says so (``isDevelopmentMode(_:)``).
    ///   - store: the store to use whatever the mode: for tests, or a store other than the default.
    public init(prefix: String, syncImmediately: Bool, developmentMode: Bool, store: (any KeyValueStore)? = nil) {
        self.prefix = prefix
        self.syncImmediately = syncImmediately
        self.developmentMode = Self.isDevelopmentMode(developmentMode)
        given = store
    }

    /// Development mode's switch, as ObservableDefaults has it: on when
    /// `explicit`, when the environment variable `OBSERVABLE_DEFAULTS_DEV_MODE`
    /// is `true`, or when `XCODE_RUNNING_FOR_PREVIEWS` is `1` (a SwiftUI preview).
    public static func isDevelopmentMode(_ explicit: Bool) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return explicit || environment["OBSERVABLE_DEFAULTS_DEV_MODE"] == "true" || environment["XCODE_RUNNING_FOR_PREVIEWS"] == "1"
    }

    /// The store the properties live in.
    public var store: any KeyValueStore {
        if let given { return given }
        return opened.withLock { opened in
            if let opened { return opened }
            let store: any KeyValueStore = developmentMode ? InMemoryKeyValueStore() : UbiquitousKeyValueStore.default
            opened = store
            return store
        }
    }

    /// A cloud-backed property's getter: the value stored under `prefix + key`
    /// decoded as `Value`, or `defaultValue` (the declared one) when the key is
    /// missing or holds something that is not a `Value` (a shell user wrote
    /// something else); tells observation it was read.
    public func value<Host: ObservableCloudObject, Value: Codable>(of host: Host, _ keyPath: KeyPath<Host, Value>,
                                                                   forKey key: String, default defaultValue: Value) -> Value {
        let storeKey = prefix + key
        observers.access(host, keyPath, registrar: host._$observationRegistrar, key: storeKey)
        return (try? store.decodable(Value.self, forKey: storeKey)) ?? defaultValue
    }

    /// A cloud-backed property's setter: stores `value` under `prefix + key`
    /// (`nil` removes the key) and tells the property's observers. A write the
    /// store refuses (over quota, posted as QuotaViolationChange) leaves the
    /// stored value, which the property goes on showing.
    public func set<Host: ObservableCloudObject, Value: Codable>(_ value: Value, of host: Host, _ keyPath: KeyPath<Host, Value>,
                                                                 forKey key: String) {
        let store = store
        host._$observationRegistrar.withMutation(of: host, keyPath: keyPath) {
            _ = try? store.set(encodable: value, forKey: prefix + key)
        }
        if syncImmediately { store.synchronize() }
    }
}

/// Tells an `@ObservableCloud` object's observers when another device changes
/// a key one of its properties was read under: only that property's
/// observers, on the thread the store posts its
/// `didChangeExternallyNotification` from. It listens while it lives; the
/// generated initializer keeps one in `_cloudObserver`, and an initializer of
/// your own (`autoInit: false`) starts one the same way:
///
/// ```swift
/// init() {
///     if !_developmentMode_ {
///         _cloudObserver = CloudObservation(host: self, prefix: _prefix)
///     }
/// }
/// ```
public final class CloudObservation: Sendable {
    /// NotificationCenter's token; only handed back to it. Unchecked: the token is not Sendable on Linux.
    private struct Token: @unchecked Sendable {
        let value: any NSObjectProtocol
    }

    private let token: Token

    /// Starts listening to `host`'s store. `prefix` is the host's (`_prefix`);
    /// the storage already puts it in front of every key it announces.
    public init<Host: ObservableCloudObject>(host: Host, prefix: String) {
        let storage = host._cloudStorage
        let observers = storage.observers
        // Synchronous (queue nil): observers hear of a change on the thread that posted it.
        token = Token(value: NotificationCenter.default.addObserver(
            forName: UbiquitousKeyValueStore.didChangeExternallyNotification, object: storage.store, queue: nil
        ) { notification in
            let keys = notification.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
            observers.announce(keys.map(StoreKey.init(_:)))
        })
    }

    deinit { NotificationCenter.default.removeObserver(token.value) }
}
