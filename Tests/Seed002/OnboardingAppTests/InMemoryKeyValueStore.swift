// Seed 002's in-memory store, verbatim (only these comments and the imports
// are added). It sits in a module that imports both the app and KVStore, each
// with a `KeyValueStore` and KVStore with an `InMemoryKeyValueStore`: this
// class shadows both imported `InMemoryKeyValueStore`s in this module, and
// `KeyValueStore` below means the app's through the typealias in
// Disambiguation.swift. (docs/swift.md § Name clashes says how.)
import KVStore
@testable import OnboardingApp

class InMemoryKeyValueStore: KeyValueStore {
    private var storage: [String: Any] = [:]

    func bool(forKey key: String) -> Bool {
        storage[key] as? Bool ?? false
    }

    func string(forKey key: String) -> String? {
        storage[key] as? String
    }

    func integer(forKey key: String) -> Int {
        storage[key] as? Int ?? 0
    }

    func setBool(_ value: Bool, forKey key: String) {
        storage[key] = value
    }

    func setString(_ value: String?, forKey key: String) {
        if let value = value {
            storage[key] = value
        } else {
            storage.removeValue(forKey: key)
        }
    }

    func setInt(_ value: Int, forKey key: String) {
        storage[key] = value
    }

    func removeObject(forKey key: String) {
        storage.removeValue(forKey: key)
    }

    // Helper for tests
    func reset() {
        storage.removeAll()
    }
}
