import Foundation
import KVStore
import Observation
import Synchronization

/// A class that `@ObservableDefaults` expanded: what the property accessors
/// reach. The macro writes the conformance and both members.
public protocol ObservableDefaultsObject: Observable, AnyObject {
    /// The registrar that tells observers of this object's properties.
    var _$observationRegistrar: ObservationRegistrar { get }
    /// Where this object's backed properties live.
    var _defaultsStorage: ObservableDefaultsStorage { get }
}

/// One `@ObservableDefaults` object's `UserDefaults` and options: the runtime
/// its backed properties' accessors call.
///
/// Values are stored as property lists: a `String`, number, `Bool`, `Date` or
/// `Data` as itself (so `UserDefaults.string(forKey:)` reads it), a `Codable`
/// struct as a dictionary, an array as an array.
///
/// Foundation's `UserDefaults` on Linux posts no notification when it changes,
/// so each write through a property posts `UserDefaults.didChangeNotification`
/// (object: the `UserDefaults`), as Apple's does; every object listening over
/// the same `UserDefaults` then compares the keys its properties were read
/// under with what it last saw there, and tells the observers of those that
/// changed. Code that writes `UserDefaults` directly can post the same
/// notification to have its change told.
public final class ObservableDefaultsStorage: @unchecked Sendable {
    // Unchecked Sendable: `UserDefaults` is thread-safe but not marked Sendable on Linux; everything else is.

    /// The `UserDefaults` the properties live in.
    public let userDefaults: UserDefaults
    /// Put in front of every property's key.
    public let prefix: String
    /// Whether changes made outside this object are kept from its observers.
    public let ignoreExternalChanges: Bool
    /// The properties read so far, to tell when their keys change outside the object.
    public let observers = PropertyObservers()
    /// For each full key read or written, the value it held then (nil: none).
    private let seen = Mutex<[StoreKey: PropertyListValue?]>([:])
    private let token = Mutex<(any NSObjectProtocol)?>(nil)

    /// Storage with `@ObservableDefaults`' options.
    ///
    /// - Parameters:
    ///   - userDefaults: where the properties live; nil: `suiteName`'s, else `UserDefaults.standard`.
    ///   - suiteName: a suite to open when `userDefaults` is nil.
    ///   - prefix: put in front of every property's key.
    ///   - ignoreExternalChanges: tell observers nothing of changes made outside this object.
    public init(userDefaults: UserDefaults?, suiteName: String? = nil, prefix: String, ignoreExternalChanges: Bool) {
        self.userDefaults = userDefaults ?? suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard
        self.prefix = prefix
        self.ignoreExternalChanges = ignoreExternalChanges
    }

    deinit { if let token = token.withLock({ $0 }) { NotificationCenter.default.removeObserver(token) } }

    /// Starts listening for changes of the `UserDefaults` made outside this
    /// object (unless it ignores them), once; `ignoring` names keys (without
    /// the prefix) whose changes are not told. The generated initializer
    /// calls it through `observerStarter()`.
    public func startObserving(ignoring ignored: [String] = []) {
        guard !ignoreExternalChanges else { return }
        let ignored = Set(ignored.map { StoreKey(prefix + $0) })
        token.withLock { token in
            guard token == nil else { return }
            // Synchronous (queue nil): observers hear of a change on the thread that made it.
            token = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: userDefaults,
                                                           queue: nil) { [weak self] _ in
                guard let self else { return }
                self.observers.announce(self.changedKeys().filter { !ignored.contains($0) })
            }
        }
    }

    /// The keys read or written through this object whose values are not what it last saw, now remembered as they are.
    private func changedKeys() -> [StoreKey] {
        let now = Dictionary(uniqueKeysWithValues: observers.keys.map { ($0, stored(forKey: $0.string)) })
        return seen.withLock { seen in
            now.compactMap { key, value in
                guard seen[key] != .some(value) else { return nil }
                seen[key] = .some(value)
                return key
            }
        }
    }

    private func stored(forKey key: String) -> PropertyListValue? {
        userDefaults.object(forKey: key).flatMap(PropertyListValue.init(foundationObject:))
    }

    /// A backed property's getter: the value under `prefix + key` decoded as
    /// `Value`, or `defaultValue` (the declared one) when the key is missing or
    /// holds something that is not a `Value`; tells observation it was read.
    public func value<Host: ObservableDefaultsObject, Value: Codable>(of host: Host, _ keyPath: KeyPath<Host, Value>,
                                                                      forKey key: String, default defaultValue: Value) -> Value {
        let fullKey = prefix + key
        observers.access(host, keyPath, registrar: host._$observationRegistrar, key: fullKey)
        let value = stored(forKey: fullKey)
        seen.withLock { if $0[StoreKey(fullKey)] == nil { $0[StoreKey(fullKey)] = .some(value) } }
        return (try? value?.decoded(as: Value.self, forKey: StoreKey(fullKey))) ?? defaultValue
    }

    /// A backed property's setter: stores `value` under `prefix + key` (`nil`
    /// removes the key), tells the property's observers, then posts
    /// `UserDefaults.didChangeNotification` for the other objects. A value that
    /// is no property list (a `Codable` type that does not encode) changes nothing.
    public func set<Host: ObservableDefaultsObject, Value: Codable>(_ value: Value, of host: Host, _ keyPath: KeyPath<Host, Value>,
                                                                    forKey key: String) {
        let fullKey = prefix + key
        let encoded: PropertyListValue?
        do { encoded = try PropertyListValue.encoding(optional: value, forKey: StoreKey(fullKey)) } catch { return }
        host._$observationRegistrar.withMutation(of: host, keyPath: keyPath) {
            if let encoded { userDefaults.set(encoded.foundationObject, forKey: fullKey) } else { userDefaults.removeObject(forKey: fullKey) }
            seen.withLock { $0[StoreKey(fullKey)] = .some(encoded) }
        }
        NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: userDefaults)
    }
}
