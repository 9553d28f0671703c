import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// Apple's setters: each overload stores its type, nil removes, and what Apple's
    /// API cannot report is refused without a crash or a change.
    @Suite("Apple's setters")
    struct AppleSetterTests {
        @Test("each set(_:forKey:) overload stores its property-list type", arguments: StoreKind.allCases)
        func overloads(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let date = Date(timeIntervalSince1970: 86_400)
                let count = 7
                store.set("text" as String?, forKey: "string")
                store.set(Data([0, 255]) as Data?, forKey: "data")
                store.set(["a", 1, true] as [Any]?, forKey: "array")
                store.set(["n": 1, "s": "x"] as [String: Any]?, forKey: "dictionary")
                store.set(Int64(1) << 40, forKey: "integer")
                store.set(2.5, forKey: "real")
                store.set(true, forKey: "bool")
                store.set(date as Any?, forKey: "date")
                store.set(count as Any?, forKey: "int")
                store.set(5, forKey: "literal")

                #expect(store.value(forKey: "string") == .string("text"))
                #expect(store.value(forKey: "data") == .data(Data([0, 255])))
                #expect(store.value(forKey: "array") == .array([.string("a"), .integer(1), .bool(true)]))
                #expect(store.value(forKey: "dictionary") == .dictionary(["n": .integer(1), "s": .string("x")]))
                #expect(store.value(forKey: "integer") == .integer(1 << 40))
                #expect(store.value(forKey: "real") == .real(2.5))
                #expect(store.value(forKey: "bool") == .bool(true))
                #expect(store.value(forKey: "date") == .date(date))
                #expect(store.value(forKey: "int") == .integer(7))
                #expect(store.value(forKey: "literal") == .integer(5))  // Int64, as on Apple platforms
            }
        }

        @Test("nil through any optional overload removes the key", arguments: StoreKind.allCases)
        func nilRemoves(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let removals: [(String, () -> Void)] = [
                    ("any", { store.set(nil as Any?, forKey: "any") }),
                    ("string", { store.set(nil as String?, forKey: "string") }),
                    ("data", { store.set(nil as Data?, forKey: "data") }),
                    ("array", { store.set(nil as [Any]?, forKey: "array") }),
                    ("dictionary", { store.set(nil as [String: Any]?, forKey: "dictionary") }),
                ]
                for (key, remove) in removals {
                    store.set(true, forKey: key)
                    remove()
                    #expect(store.value(forKey: key) == nil, "set(nil) for \(key)")
                }
                store.set(true, forKey: "gone")
                store.removeObject(forKey: "gone")
                store.removeObject(forKey: "never-there")
                #expect(store.values.isEmpty)
            }
        }

        @Test("an object that is not a property list is refused and changes nothing", arguments: StoreKind.allCases)
        func nonPropertyList(kind: StoreKind) async throws {
            struct Custom {}
            try await withStore(kind) { _, store in
                store.set("old", forKey: "k")
                store.set(Custom() as Any?, forKey: "k")
                store.set([Custom()] as [Any]?, forKey: "k")
                store.set(["nested": [Custom()]] as [String: Any]?, forKey: "k")
                #expect(store.string(forKey: "k") == "old")
                #expect(throws: KVStoreError.invalidValue(key: "k", reason: "Custom is not a property-list type")) {
                    try store.setObject(Custom(), forKey: "k")
                }
            }
        }

        @Test("a key longer than 128 UTF-16 units is refused without a crash (Apple raises)", arguments: StoreKind.allCases)
        func tooLongKey(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let longest = String(repeating: "😀", count: 64)  // 128 UTF-16 units
                let tooLong = longest + "a"
                store.set("fits", forKey: longest)
                store.set("no", forKey: tooLong)
                store.set(1.5, forKey: tooLong)
                store.removeObject(forKey: tooLong)
                #expect(store.string(forKey: longest) == "fits")
                #expect(store.object(forKey: tooLong) == nil)
                #expect(store.values.count == 1)
            }
        }

        @Test("synchronize succeeds and keeps what was written", arguments: StoreKind.allCases)
        func synchronize(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                store.set("v", forKey: "k")
                #expect(store.synchronize())
                #expect(store.string(forKey: "k") == "v")
            }
        }
    }
}
