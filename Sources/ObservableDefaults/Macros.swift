// The macros, as ObservableDefaults declares them; their expansions call the public runtime in this
// module (ObservableCloudStorage, ObservableDefaultsStorage, CloudObservation, PropertyObservers).

/// Makes a class's stored properties live in a key-value store
/// (`UbiquitousKeyValueStore.default`, this package's NSUbiquitousKeyValueStore),
/// observable property by property.
///
/// ```swift
/// @ObservableCloud
/// class CloudSettings {
///     var theme = "light"            // stored under "theme", observable
///     @CloudKey(keyValueStoreKey: "user_display_name")
///     var username = "Fatbobman"      // stored under "user_display_name"
///     @ObservableOnly var draft = ""  // observable, not stored
///     @Ignore var cache = ""          // neither
/// }
/// ```
///
/// Every stored `var` is cloud-backed (``CloudBacked(keyValueStoreKey:)``)
/// unless marked otherwise, or, with `observeFirst: true`, observable only
/// unless marked `@CloudBacked`. A backed property reads the store each time:
/// a missing, removed or wrongly typed key reads as the declared default.
/// Another device's change to a key tells that property's observers only
/// (``CloudObservation``).
///
/// The macro adds `init(prefix:syncImmediately:developmentMode:store:)`
/// (unless `autoInit: false`), whose arguments override the macro's.
///
/// - Parameters:
///   - autoInit: generate the initializer; without it, write one that calls
///     `_cloudObserver = CloudObservation(host: self, prefix: _prefix)`.
///   - prefix: put in front of every key.
///   - observeFirst: properties are observable only unless marked `@CloudBacked`.
///   - syncImmediately: call the store's `synchronize()` after each write through a property.
///   - developmentMode: keep the properties in a store in memory of the object's
///     own; also on when `OBSERVABLE_DEFAULTS_DEV_MODE` is `true` or
///     `XCODE_RUNNING_FOR_PREVIEWS` is `1` (``ObservableCloudStorage/isDevelopmentMode(_:)``).
@attached(member, names: named(_$observationRegistrar), named(_cloudStorage), named(_cloudObserver), named(_prefix),
          named(_developmentMode_), named(init))
@attached(memberAttribute)
@attached(extension, conformances: ObservableCloudObject, Observable)
public macro ObservableCloud(autoInit: Bool = true, prefix: String = "", observeFirst: Bool = false,
                             syncImmediately: Bool = false, developmentMode: Bool = false) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "ObservableCloudMacro")

/// Stores a property of an ``ObservableCloud(autoInit:prefix:observeFirst:syncImmediately:developmentMode:)``
/// class in its store under `prefix + key` (the property's name unless
/// `keyValueStoreKey` or ``CloudKey(keyValueStoreKey:)`` names another), observable.
///
/// The property must be a `var` with a default value, of a `Codable` type
/// (optionals too: `nil` removes the key).
@attached(peer, names: prefixed(_))
@attached(accessor, names: named(init), named(get), named(set))
public macro CloudBacked(keyValueStoreKey: String? = nil) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "CloudBackedMacro")

/// Names the key a cloud-backed property is stored under, instead of its name.
@attached(peer)
public macro CloudKey(keyValueStoreKey: String) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "KeyMarkerMacro")

/// Makes a class's stored properties live in `UserDefaults`, observable
/// property by property: ObservableDefaults' `@ObservableDefaults` for Linux.
///
/// Every stored `var` is backed (``DefaultsBacked(userDefaultsKey:)``) unless
/// marked ``ObservableOnly()`` or ``Ignore()`` (or, with `observeFirst: true`,
/// observable only unless marked `@DefaultsBacked`). A missing, removed or
/// wrongly typed key reads as the declared default.
///
/// The macro adds `init(userDefaults:ignoreExternalChanges:prefix:)` (unless
/// `autoInit: false`; then call `observerStarter()` in your initializer).
///
/// Foundation's `UserDefaults` on Linux posts no change notification of its
/// own: a write through any `@ObservableDefaults` object posts
/// `UserDefaults.didChangeNotification`, which every other object over the
/// same `UserDefaults` hears, telling the observers of the keys whose values
/// changed. A write made with `UserDefaults.set(_:forKey:)` directly is read at
/// the next access but told to observers only when someone posts that notification.
///
/// - Parameters:
///   - autoInit: generate the initializer.
///   - ignoreExternalChanges: tell observers nothing of changes made outside the object.
///   - suiteName: use `UserDefaults(suiteName:)` instead of `.standard`.
///   - prefix: put in front of every key.
///   - observeFirst: properties are observable only unless marked `@DefaultsBacked`.
///   - limitToInstance: accepted for ObservableDefaults' sake; an object here
///     always listens to its own `UserDefaults` instance.
///   - userDefaults: the `UserDefaults` to use (an expression, evaluated for each object).
@attached(member, names: named(_$observationRegistrar), named(_defaultsStorage), named(_prefix), named(observerStarter),
          named(init))
@attached(memberAttribute)
@attached(extension, conformances: ObservableDefaultsObject, Observable)
public macro ObservableDefaults(autoInit: Bool = true, ignoreExternalChanges: Bool = false, suiteName: String? = nil,
                                prefix: String = "", observeFirst: Bool = false, limitToInstance: Bool = true,
                                userDefaults: UserDefaults? = nil) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "ObservableDefaultsMacro")

/// Stores a property of an ``ObservableDefaults(autoInit:ignoreExternalChanges:suiteName:prefix:observeFirst:limitToInstance:userDefaults:)``
/// class in its `UserDefaults` under `prefix + key` (the property's name unless
/// `userDefaultsKey` or ``DefaultsKey(userDefaultsKey:)`` names another), observable.
@attached(peer, names: prefixed(_))
@attached(accessor, names: named(init), named(get), named(set))
public macro DefaultsBacked(userDefaultsKey: String? = nil) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "DefaultsBackedMacro")

/// Names the `UserDefaults` key a backed property is stored under, instead of its name.
@attached(peer)
public macro DefaultsKey(userDefaultsKey: String) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "KeyMarkerMacro")

/// Makes a property of an `@ObservableCloud` or `@ObservableDefaults` class
/// observable but not stored: it starts at its declared value in each object.
@attached(peer, names: prefixed(_))
@attached(accessor, names: named(init), named(get), named(set))
public macro ObservableOnly() = #externalMacro(module: "ObservableDefaultsMacros", type: "ObservableOnlyMacro")

/// Leaves a property of an `@ObservableCloud` or `@ObservableDefaults` class
/// as it is written: neither observable nor stored.
@attached(peer)
public macro Ignore() = #externalMacro(module: "ObservableDefaultsMacros", type: "IgnoreMacro")
