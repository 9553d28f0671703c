import Foundation

/// NSUbiquitousKeyValueStore's API, with Apple's signatures, over a store of
/// property-list values that keeps kvfs's limits (1024 keys, 1 MB in all,
/// keys of at most 128 UTF-16 units).
///
/// A store implements only the primitives (`value(forKey:)`, `values`,
/// `setValue(_:forKey:)`, `removeValue(forKey:)`, `synchronize()`, `changes`);
/// Apple's getters, setters and coercions, the throwing and Codable variants
/// come from this protocol's extensions, once for every store. Inject it where
/// code used `NSUbiquitousKeyValueStore.default`, and test with
/// ``InMemoryKeyValueStore``.
///
/// Getters coerce as Apple documents for NSUbiquitousKeyValueStore (and as
/// NSUserDefaults does); a missing key gives nil, 0, 0.0 or false:
///
/// | stored  | `string`        | `longLong`            | `double`         | `bool`                |
/// |---------|-----------------|-----------------------|------------------|-----------------------|
/// | string  | itself          | leading integer ("123"→123, "12ab"→12, "x"→0) | leading number ("123.4"→123.4) | "true", "YES", "1"…→true (NSString `boolValue`: first non-blank is Y, y, T, t or 1–9) |
/// | integer | "123"           | itself                | exact            | non-zero              |
/// | real    | "2.5", "2.0"    | truncated (2.67→2)    | itself           | non-zero              |
/// | bool    | "1" / "0"       | 1 / 0                 | 1.0 / 0.0        | itself                |
/// | date, data, array, dictionary | nil | 0              | 0.0              | false                 |
///
/// `array`, `dictionary` and `data` return nil unless the value has that type.
/// `object(forKey:)`, `array(forKey:)`, `dictionary(forKey:)` and
/// `dictionaryRepresentation` give integers, reals and Booleans as `NSNumber`
/// at any depth, so `as? Int`, `as? Int64`, `as? Double` and `as? Bool` work
/// on them as on Apple platforms (a stored `true` is `1` as an `Int`).
///
/// `set(_:forKey:)` keeps a number's kind: `Bool` is a bool, every integer
/// type (`Int8`/`CChar` too) an integer, `Double`, `Float` and `CGFloat` a real.
///
/// Writes Apple's API cannot report change nothing, and are made visible:
/// - a write over quota posts QuotaViolationChange, as Apple does, synchronously
///   (before the setter returns, on its thread) on every store;
/// - an object that is not a property list (`NSNull`, `URL`, `UUID`,
///   `[Int: Int]`, an array holding nil), an unsigned integer above
///   `Int64.max`, and a key that is empty or over 128 UTF-16 units (where
///   Apple raises an exception) log one warning line through swift-log (label
///   `kvfs.library`; standard error unless the program bootstrapped another
///   handler): `set(_:forKey:) changed nothing: …`, and post nothing.
///
/// ``setValue(_:forKey:)`` and ``setObject(_:forKey:)`` throw the exact
/// ``KVStoreError`` instead (quota refusals are posted too).
public protocol KeyValueStore: AnyObject, Sendable {
    // MARK: Primitives

    /// The value stored for `key`, or nil.
    func value(forKey key: String) -> PropertyListValue?

    /// Every key and its value.
    var values: [StoreKey: PropertyListValue] { get }

    /// Stores `value` for `key`, or throws why not: the key is empty or too long,
    /// or the write would pass a limit. A refused write changes nothing; a quota
    /// refusal also posts QuotaViolationChange, as the change log records it.
    func setValue(_ value: PropertyListValue, forKey key: String) throws(KVStoreError)

    /// Removes `key`'s value; removing a missing key does nothing.
    func removeValue(forKey key: String) throws(KVStoreError)

    /// Makes this process's writes durable and takes in other devices' writes
    /// now. Returns false when that failed.
    @discardableResult
    func synchronize() -> Bool

    /// The store's changes that did not come from this process's writes (and
    /// quota refusals), as an async sequence: each access is a new subscriber
    /// that gets every change from then on. The same changes post
    /// ``didChangeExternallyNotification``.
    var changes: AsyncStream<StoreChange> { get }

    // MARK: History

    /// The versions of `key` within the store's retention, oldest first, each
    /// with its value (nil for a removal): what `kvfs history KEY` lists. A
    /// removed key keeps its versions while the retention keeps them.
    func history(forKey key: String) -> [KeyVersion]

    /// Writes `version` (one of ``history(forKey:)``'s) as `key`'s new
    /// version, as `kvfs restore` does: its value, or for a removal the key's
    /// removal, written now, which syncs as any write does.
    ///
    /// - Throws: ``KVStoreError/noSuchVersion(key:reason:)`` when the
    ///   retention no longer keeps it, or a quota refusal as ``setValue(_:forKey:)`` does.
    func restore(_ version: KeyVersion, forKey key: String) throws(KVStoreError)

    // MARK: Delivery (kvfs's own: Apple's store cannot tell)

    /// The devices that have read `key`'s current value: this one first, then
    /// the others by name; empty when the key has no value, or the store no
    /// devices (``InMemoryKeyValueStore``).
    func deliveredTo(key: String) -> [DeviceInfo]

    /// Waits until every other device that is active (as `kvfs status`
    /// counts them: not stopped or quiet) has read this device's latest
    /// writes, or `timeout` seconds have passed: true once they have, false
    /// on timeout. A store with no other devices returns true at once.
    func waitUntilDelivered(timeout: TimeInterval) async -> Bool

    // MARK: Apple's getters

    /// The value as a Foundation object (`String`, `NSNumber` for integers,
    /// reals and Booleans, `Date`, `Data`, `[Any]`, `[String: Any]`), or nil.
    func object(forKey aKey: String) -> Any?
    /// The value as a string (numbers coerced, see the table above), or nil.
    func string(forKey aKey: String) -> String?
    /// The value if it is an array, else nil.
    func array(forKey aKey: String) -> [Any]?
    /// The value if it is a dictionary, else nil.
    func dictionary(forKey aKey: String) -> [String: Any]?
    /// The value if it is data, else nil.
    func data(forKey aKey: String) -> Data?
    /// The value as a 64-bit integer (coerced, see the table above), or 0.
    func longLong(forKey aKey: String) -> Int64
    /// The value as a double (coerced, see the table above), or 0.0.
    func double(forKey aKey: String) -> Double
    /// The value as a Boolean (coerced, see the table above), or false.
    func bool(forKey aKey: String) -> Bool
    /// Every key and its value as a Foundation object.
    var dictionaryRepresentation: [String: Any] { get }

    // MARK: Apple's setters

    /// Stores a property-list object; nil removes the key. Anything else changes nothing and logs a warning.
    func set(_ anObject: Any?, forKey aKey: String)
    /// Stores a string; nil removes the key.
    func set(_ aString: String?, forKey aKey: String)
    /// Stores data; nil removes the key.
    func set(_ aData: Data?, forKey aKey: String)
    /// Stores an array of property-list objects; nil removes the key.
    func set(_ anArray: [Any]?, forKey aKey: String)
    /// Stores a dictionary of property-list objects; nil removes the key.
    func set(_ aDictionary: [String: Any]?, forKey aKey: String)
    /// Stores a 64-bit integer.
    func set(_ value: Int64, forKey aKey: String)
    /// Stores a double.
    func set(_ value: Double, forKey aKey: String)
    /// Stores a Boolean.
    func set(_ value: Bool, forKey aKey: String)
    /// Removes the key's value; a missing key is no error.
    func removeObject(forKey aKey: String)
}
