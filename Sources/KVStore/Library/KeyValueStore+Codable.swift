import Foundation

// Codable values, stored as property lists so that `cat` on a mount shows a
// struct as a readable XML dictionary, and shell users can edit it.
extension KeyValueStore {
    /// Stores an `Encodable` value as a property-list value (a struct or
    /// dictionary as a dictionary, an array as an array, a scalar as itself);
    /// `nil` removes the key.
    ///
    /// - Throws: ``KVStoreError/invalidValue(key:reason:)`` when the value cannot
    ///   be encoded, else what ``setValue(_:forKey:)`` throws.
    public func set<T: Encodable>(encodable value: T, forKey key: String) throws(KVStoreError) {
        guard let encoded = try PropertyListValue.encoding(optional: value, forKey: StoreKey(key)) else { return try removeValue(forKey: key) }
        try setValue(encoded, forKey: key)
    }

    /// The value decoded as `T`, or nil when the key has none.
    ///
    /// - Throws: ``KVStoreError/invalidValue(key:reason:)`` naming what did not
    ///   match when the stored value is not a `T`.
    public func decodable<T: Decodable>(_ type: T.Type = T.self, forKey key: String) throws(KVStoreError) -> T? {
        try value(forKey: key)?.decoded(as: type, forKey: StoreKey(key))
    }
}
