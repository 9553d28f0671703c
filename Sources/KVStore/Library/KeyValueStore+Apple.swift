import Foundation
import Logging

/// Where Apple's API reports what it cannot report otherwise (swift-log: standard
/// error unless the program bootstrapped another handler).
private let libraryLogger = Logger(label: "kvfs.library")

// Apple's getters and setters, written once over the primitives.
extension KeyValueStore {
    /// The value as a Foundation object (numbers and Booleans as `NSNumber`), or nil.
    public func object(forKey aKey: String) -> Any? { value(forKey: aKey)?.appleObject }

    /// The value as a string, numbers coerced (see ``KeyValueStore``), or nil.
    public func string(forKey aKey: String) -> String? { value(forKey: aKey)?.coercedString }

    /// The value if it is an array, else nil.
    public func array(forKey aKey: String) -> [Any]? {
        guard case .array? = value(forKey: aKey) else { return nil }
        return object(forKey: aKey) as? [Any]
    }

    /// The value if it is a dictionary, else nil.
    public func dictionary(forKey aKey: String) -> [String: Any]? {
        guard case .dictionary? = value(forKey: aKey) else { return nil }
        return object(forKey: aKey) as? [String: Any]
    }

    /// The value if it is data, else nil.
    public func data(forKey aKey: String) -> Data? {
        guard case let .data(bytes)? = value(forKey: aKey) else { return nil }
        return bytes
    }

    /// The value as a 64-bit integer, coerced (see ``KeyValueStore``), or 0.
    public func longLong(forKey aKey: String) -> Int64 { value(forKey: aKey)?.coercedInt64 ?? 0 }

    /// The value as a double, coerced (see ``KeyValueStore``), or 0.0.
    public func double(forKey aKey: String) -> Double { value(forKey: aKey)?.coercedDouble ?? 0 }

    /// The value as a Boolean, coerced (see ``KeyValueStore``), or false.
    public func bool(forKey aKey: String) -> Bool { value(forKey: aKey)?.coercedBool ?? false }

    /// Every key and its value as a Foundation object (numbers and Booleans as
    /// `NSNumber`). Of keys that differ only in normalization, which a Swift
    /// `[String: Any]` cannot hold apart, it holds the first in UTF-8 order;
    /// ``values`` holds them all.
    public var dictionaryRepresentation: [String: Any] { values.stringKeyed(\.appleObject) }

    /// Stores a property-list object; nil removes the key. An object that is
    /// not a property list and a key that is empty or too long change nothing
    /// and log one warning line (Apple's store raises); a write over quota
    /// changes nothing and posts QuotaViolationChange.
    public func set(_ anObject: Any?, forKey aKey: String) {
        guard let anObject else { return removeObject(forKey: aKey) }
        perform("set(_:forKey:)") { () throws(KVStoreError) in try setObject(anObject, forKey: aKey) }
    }

    /// Stores a string; nil removes the key.
    public func set(_ aString: String?, forKey aKey: String) { write(aString.map(PropertyListValue.string), forKey: aKey) }

    /// Stores data; nil removes the key.
    public func set(_ aData: Data?, forKey aKey: String) { write(aData.map(PropertyListValue.data), forKey: aKey) }

    /// Stores an array of property-list objects; nil removes the key.
    public func set(_ anArray: [Any]?, forKey aKey: String) { set(anArray as Any?, forKey: aKey) }

    /// Stores a dictionary of property-list objects; nil removes the key.
    public func set(_ aDictionary: [String: Any]?, forKey aKey: String) { set(aDictionary as Any?, forKey: aKey) }

    /// Stores a 64-bit integer.
    public func set(_ value: Int64, forKey aKey: String) { write(.integer(value), forKey: aKey) }

    /// Stores a double.
    public func set(_ value: Double, forKey aKey: String) { write(.real(value), forKey: aKey) }

    /// Stores a Boolean.
    public func set(_ value: Bool, forKey aKey: String) { write(.bool(value), forKey: aKey) }

    /// Removes the key's value; a missing key is no error. An empty or too long
    /// key logs one warning line (Apple's store raises).
    public func removeObject(forKey aKey: String) {
        perform("removeObject(forKey:)") { () throws(KVStoreError) in try removeValue(forKey: aKey) }
    }

    /// Stores a property-list object, or throws why not.
    ///
    /// - Throws: ``KVStoreError/invalidValue(key:reason:)`` naming what is not
    ///   a property list and where (`at [2]: NSNull is not a property-list type`),
    ///   else what ``setValue(_:forKey:)`` throws.
    public func setObject(_ object: Any, forKey key: String) throws(KVStoreError) {
        let value: PropertyListValue
        do {
            value = try PropertyListValue.converting(object)
        } catch {
            throw .invalidValue(key: StoreKey(key), reason: error.reason)
        }
        try setValue(value, forKey: key)
    }

    private func write(_ value: PropertyListValue?, forKey key: String) {
        guard let value else { return removeObject(forKey: key) }
        perform("set(_:forKey:)") { () throws(KVStoreError) in try setValue(value, forKey: key) }
    }

    /// Runs a write for Apple's API, which cannot report a refusal. A quota
    /// refusal was posted as QuotaViolationChange already; any other (not a
    /// property list, a bad key, an I/O failure) logs one warning line, where
    /// Apple's store raises an exception, so that it does not go unseen.
    private func perform(_ method: String, _ write: () throws(KVStoreError) -> Void) {
        do {
            try write()
        } catch {
            guard !error.isQuotaViolation else { return }
            libraryLogger.warning("\(method) changed nothing: \(error)")
        }
    }
}
