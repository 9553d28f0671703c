// Seed 002 ported to kvfs: what the app writes so that kvfs's store is its
// production `KeyValueStore` (as it would for UserDefaults, whose API also
// spells these `set(_:forKey:)` and `integer(forKey:)`). The app's
// `bool(forKey:)`, `string(forKey:)` and `removeObject(forKey:)` are Apple's
// and need nothing.
import KVStore

extension KVStore.KeyValueStore {
    /// UserDefaults' `integer(forKey:)`: the stored integer, or 0.
    func integer(forKey key: String) -> Int { Int(truncatingIfNeeded: longLong(forKey: key)) }
    func setBool(_ value: Bool, forKey key: String) { set(value, forKey: key) }
    func setString(_ value: String?, forKey key: String) { set(value, forKey: key) }
    func setInt(_ value: Int, forKey key: String) { set(Int64(value), forKey: key) }
}

extension NSUbiquitousKeyValueStore: KeyValueStore {}
