// Seed 002 ("InMemoryKeyValueStore Pattern"): the app's own store protocol.
// The seed shows only its conformer; these are the methods the conformer and
// the tests use. The app's protocol has the same name as KVStore's: inside this
// module `KeyValueStore` is the app's own (a module's declarations shadow what
// it imports), and KVStore's is `KVStore.KeyValueStore`.
import KVStore

/// The key-value storage the app's logic needs (UserDefaults-shaped).
protocol KeyValueStore {
    func bool(forKey key: String) -> Bool
    func string(forKey key: String) -> String?
    func integer(forKey key: String) -> Int
    func setBool(_ value: Bool, forKey key: String)
    func setString(_ value: String?, forKey key: String)
    func setInt(_ value: Int, forKey key: String)
    func removeObject(forKey key: String)
}
