import Foundation

/// Marks a property of an ``ObservableCloudSettings`` subclass as stored in
/// its store under `prefix + key`, and observable.
///
/// The key is named explicitly (a property wrapper cannot learn its property's
/// name), which also keeps stored data reachable when the property is renamed.
/// Values are stored as property lists (``KeyValueStore/set(encodable:forKey:)``),
/// so any `Codable` type works and shell users see readable values.
@propertyWrapper
public struct CloudBacked<Value: Codable> {
    private let key: String
    private let defaultValue: Value

    /// Backs the property by `key`; the declared value is its default.
    public init(wrappedValue: Value, _ key: String) {
        self.key = key
        defaultValue = wrappedValue
    }

    /// The same, as ObservableDefaults spells it (`@CloudBacked(keyValueStoreKey:)`, `@CloudKey(keyValueStoreKey:)`).
    public init(wrappedValue: Value, keyValueStoreKey key: String) {
        self.init(wrappedValue: wrappedValue, key)
    }

    /// Unavailable: the property lives in the enclosing settings object's store.
    @available(*, unavailable, message: "@CloudBacked works only in a subclass of ObservableCloudSettings")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Reads and writes the property through the settings object's store.
    public static subscript<Settings: ObservableCloudSettings>(
        _enclosingInstance settings: Settings,
        wrapped property: ReferenceWritableKeyPath<Settings, Value>,
        storage wrapper: ReferenceWritableKeyPath<Settings, Self>
    ) -> Value {
        get {
            let backing = settings[keyPath: wrapper]
            let storeKey = settings.prefix + backing.key
            settings.didAccess(property, of: settings, storeKey: storeKey)
            // A value that is missing or not a Value (a shell user wrote something else) reads as the default.
            return ((try? settings.store.decodable(Value.self, forKey: storeKey)) ?? nil) ?? backing.defaultValue
        }
        set {
            let storeKey = settings.prefix + settings[keyPath: wrapper].key
            settings.registrar.withMutation(of: settings, keyPath: property) {
                // A refused write (over quota) leaves the stored value, which the property keeps showing.
                try? settings.store.set(encodable: newValue, forKey: storeKey)
            }
            if settings.syncImmediately { settings.store.synchronize() }
        }
    }
}

/// ObservableDefaults' name for ``CloudBacked``: `@CloudKey(keyValueStoreKey: "key")`.
public typealias CloudKey<Value: Codable> = CloudBacked<Value>

/// ObservableDefaults' name for the types a cloud-backed property may have:
/// here any `Codable` type, stored as a property list.
public typealias CodableCloudPropertyListValue = Codable

/// Marks a property as neither observable nor stored: a plain stored property,
/// spelled as ObservableDefaults spells it, so its code compiles unchanged.
@propertyWrapper
public struct Ignore<Value> {
    /// The value, kept in the object like any stored property.
    public var wrappedValue: Value

    /// Starts the property with the declared value.
    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
}

/// Marks a property of an ``ObservableCloudSettings`` subclass as observable
/// but not stored (ObservableDefaults' `@ObservableOnly`).
@propertyWrapper
public struct ObservableOnly<Value> {
    private var value: Value

    /// Starts the property with the declared value.
    public init(wrappedValue: Value) { value = wrappedValue }

    /// Unavailable: the property is reached through its settings object.
    @available(*, unavailable, message: "@ObservableOnly works only in a subclass of ObservableCloudSettings")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Reads and writes the value, telling observation.
    public static subscript<Settings: ObservableCloudSettings>(
        _enclosingInstance settings: Settings,
        wrapped property: ReferenceWritableKeyPath<Settings, Value>,
        storage wrapper: ReferenceWritableKeyPath<Settings, Self>
    ) -> Value {
        get {
            settings.didAccess(property, of: settings)
            return settings[keyPath: wrapper].value
        }
        set {
            settings.registrar.withMutation(of: settings, keyPath: property) { settings[keyPath: wrapper].value = newValue }
        }
    }
}
