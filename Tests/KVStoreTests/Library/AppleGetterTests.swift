import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// Apple's getters: defaults for missing keys and the coercions documented on KeyValueStore.
    @Suite("Apple's getters")
    struct AppleGetterTests {
        @Test("a missing key gives nil, 0, 0.0 and false", arguments: StoreKind.allCases)
        func missingKey(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                #expect(store.object(forKey: "none") == nil)
                #expect(store.string(forKey: "none") == nil)
                #expect(store.array(forKey: "none") == nil)
                #expect(store.dictionary(forKey: "none") == nil)
                #expect(store.data(forKey: "none") == nil)
                #expect(store.longLong(forKey: "none") == 0)
                #expect(store.double(forKey: "none") == 0.0)
                #expect(store.bool(forKey: "none") == false)
            }
        }

        /// One stored value and what each scalar getter makes of it.
        struct Coercion: Sendable, CustomTestStringConvertible {
            var stored: PropertyListValue
            var string: String?
            var longLong: Int64
            var double: Double
            var bool: Bool
            var testDescription: String { "\(stored)" }
        }

        static let coercions: [Coercion] = [
            Coercion(stored: .string("123"), string: "123", longLong: 123, double: 123, bool: true),
            Coercion(stored: .string(" 42x"), string: " 42x", longLong: 42, double: 42, bool: true),
            Coercion(stored: .string("123.4"), string: "123.4", longLong: 123, double: 123.4, bool: true),
            Coercion(stored: .string("YES"), string: "YES", longLong: 0, double: 0, bool: true),
            Coercion(stored: .string("true"), string: "true", longLong: 0, double: 0, bool: true),
            Coercion(stored: .string("NO"), string: "NO", longLong: 0, double: 0, bool: false),
            Coercion(stored: .string("false"), string: "false", longLong: 0, double: 0, bool: false),
            Coercion(stored: .string("0"), string: "0", longLong: 0, double: 0, bool: false),
            Coercion(stored: .string("hello"), string: "hello", longLong: 0, double: 0, bool: false),
            Coercion(stored: .integer(123), string: "123", longLong: 123, double: 123, bool: true),
            Coercion(stored: .integer(-5), string: "-5", longLong: -5, double: -5, bool: true),
            Coercion(stored: .integer(0), string: "0", longLong: 0, double: 0, bool: false),
            Coercion(stored: .real(2.67), string: "2.67", longLong: 2, double: 2.67, bool: true),
            Coercion(stored: .real(-2.67), string: "-2.67", longLong: -2, double: -2.67, bool: true),
            Coercion(stored: .real(0), string: "0.0", longLong: 0, double: 0, bool: false),
            Coercion(stored: .real(1e300), string: "1e+300", longLong: .max, double: 1e300, bool: true),
            Coercion(stored: .real(-1e300), string: "-1e+300", longLong: .min, double: -1e300, bool: true),
            Coercion(stored: .bool(true), string: "1", longLong: 1, double: 1, bool: true),
            Coercion(stored: .bool(false), string: "0", longLong: 0, double: 0, bool: false),
            Coercion(stored: .date(Date(timeIntervalSince1970: 1000)), string: nil, longLong: 0, double: 0, bool: false),
            Coercion(stored: .data(Data("123".utf8)), string: nil, longLong: 0, double: 0, bool: false),
            Coercion(stored: .array([.integer(1)]), string: nil, longLong: 0, double: 0, bool: false),
            Coercion(stored: .dictionary(["a": .integer(1)]), string: nil, longLong: 0, double: 0, bool: false),
        ]

        @Test("string, longLong, double and bool coerce as Apple's store", arguments: StoreKind.allCases, coercions)
        func scalarGetters(kind: StoreKind, coercion: Coercion) async throws {
            try await withStore(kind) { _, store in
                try store.setValue(coercion.stored, forKey: "k")
                #expect(store.string(forKey: "k") == coercion.string)
                #expect(store.longLong(forKey: "k") == coercion.longLong)
                #expect(store.double(forKey: "k") == coercion.double)
                #expect(store.bool(forKey: "k") == coercion.bool)
            }
        }

        @Test("a real that is not a number reads as 0 and as \"nan\"")
        func notANumber() throws {
            let store = InMemoryKeyValueStore()
            try store.setValue(.real(.nan), forKey: "k")
            #expect(store.longLong(forKey: "k") == 0)
            #expect(store.string(forKey: "k") == "nan")
            #expect(store.double(forKey: "k").isNaN)
        }

        @Test("array, dictionary and data return only their own type", arguments: StoreKind.allCases)
        func containerGetters(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                try store.setValue(.array([.integer(1), .string("two")]), forKey: "array")
                try store.setValue(.dictionary(["n": .integer(3)]), forKey: "dictionary")
                try store.setValue(.data(Data([1, 2, 3])), forKey: "data")
                try store.setValue(.string("text"), forKey: "string")

                #expect(store.array(forKey: "array")?.count == 2)
                #expect(store.array(forKey: "array")?.last as? String == "two")
                #expect(store.dictionary(forKey: "dictionary")?["n"] as? Int == 3)
                #expect(store.data(forKey: "data") == Data([1, 2, 3]))
                for other in ["dictionary", "data", "string"] { #expect(store.array(forKey: other) == nil) }
                for other in ["array", "data", "string"] { #expect(store.dictionary(forKey: other) == nil) }
                for other in ["array", "dictionary", "string"] { #expect(store.data(forKey: other) == nil) }
            }
        }

        @Test("object gives numbers as NSNumber, so as? Int, Int64 and Double all work", arguments: StoreKind.allCases)
        func objectCasts(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let date = Date(timeIntervalSince1970: 1_700_000_000.5)
                try store.setValue(.integer(42), forKey: "integer")
                try store.setValue(.real(2.5), forKey: "real")
                try store.setValue(.bool(true), forKey: "bool")
                try store.setValue(.date(date), forKey: "date")
                try store.setValue(.array([.integer(1), .integer(2)]), forKey: "numbers")
                try store.setValue(.dictionary(["a": .integer(1)]), forKey: "table")

                #expect(store.object(forKey: "integer") as? Int == 42)
                #expect(store.object(forKey: "integer") as? Int64 == 42)
                #expect(store.object(forKey: "integer") as? Double == 42)
                #expect(store.object(forKey: "real") as? Double == 2.5)
                #expect(store.object(forKey: "real") as? Int == nil)  // not exact, as on Apple platforms
                #expect(store.object(forKey: "bool") as? Bool == true)
                #expect(store.object(forKey: "date") as? Date == date)
                #expect(store.array(forKey: "numbers") as? [Int] == [1, 2])
                #expect(store.dictionary(forKey: "table") as? [String: Int] == ["a": 1])
                let everything = store.dictionaryRepresentation
                #expect(everything.count == 6)
                #expect(everything["integer"] as? Int == 42)
                #expect(everything["numbers"] as? [Int64] == [1, 2])
            }
        }
    }
}
