import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// Numbers between Swift, NSNumber and the store, both ways, as Apple's
    /// store bridges them (issue 9, items 2–4).
    @Suite("Number bridging")
    struct NumberBridgingTests {
        /// Stores each object under its own key with `set(_:forKey:)` and checks what was stored.
        private static func expectStored(_ cases: [(object: Any, stored: PropertyListValue)], in store: any KeyValueStore,
                                         sourceLocation: SourceLocation = #_sourceLocation) {
            for (index, entry) in cases.enumerated() {
                store.set(entry.object as Any?, forKey: "n\(index)")
                #expect(store.value(forKey: "n\(index)") == entry.stored,
                        "\(type(of: entry.object)) \(entry.object)", sourceLocation: sourceLocation)
            }
        }

        @Test("every integer type is an integer, Int8 and CChar too; only Bool is a bool (9.2)", arguments: StoreKind.allCases)
        func integersStayIntegers(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                Self.expectStored([
                    (Int8(100), .integer(100)), (CChar(-5), .integer(-5)), (Int8(1), .integer(1)), (Int8(0), .integer(0)),
                    (UInt8(200), .integer(200)), (Int16(-300), .integer(-300)), (UInt16.max, .integer(65535)),
                    (Int32.min, .integer(Int64(Int32.min))), (UInt32.max, .integer(Int64(UInt32.max))),
                    (Int.min, .integer(.min)), (UInt(7), .integer(7)), (Int64.max, .integer(.max)),
                    (UInt64(Int64.max), .integer(.max)),
                    (NSNumber(value: Int8(100)), .integer(100)), (NSNumber(value: CChar(1)), .integer(1)),
                    (NSNumber(value: UInt8(255)), .integer(255)), (NSNumber(value: UInt64(5)), .integer(5)),
                    (true, .bool(true)), (false, .bool(false)),
                    (NSNumber(value: true), .bool(true)), (NSNumber(value: false), .bool(false)),
                    ([Int8(100), true, NSNumber(value: Int8(0))] as [Any], .array([.integer(100), .bool(true), .integer(0)])),
                ], in: store)
                store.set(Int8(100) as Any?, forKey: "volume")
                #expect(store.longLong(forKey: "volume") == 100)
                #expect(store.object(forKey: "volume") as? Int == 100)
            }
        }

        @Test("Double, Float, CGFloat and real NSNumbers are reals, exactly (9.3)", arguments: StoreKind.allCases)
        func reals(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                Self.expectStored([
                    (CGFloat(1.5), .real(1.5)), (CGFloat.pi, .real(Double(CGFloat.pi))), (Float(0.1), .real(Double(Float(0.1)))),
                    (0.1, .real(0.1)), (NSNumber(value: 2.5), .real(2.5)), (NSNumber(value: Float(0.1)), .real(Double(Float(0.1)))),
                    (NSNumber(value: 1.0), .real(1)), (["width": CGFloat(320)] as [String: Any], .dictionary(["width": .real(320)])),
                ], in: store)
            }
        }

        @Test("an unsigned integer above Int64.max is refused, and says why (9.3)", arguments: StoreKind.allCases)
        func unsignedPastInt64(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let tooLarge: [(object: Any, reason: String)] = [
                    (UInt64(Int64.max) + 1, "9223372036854775808 does not fit a property-list integer (at most 9223372036854775807)"),
                    (UInt64.max, "18446744073709551615 does not fit a property-list integer (at most 9223372036854775807)"),
                    (UInt.max, "18446744073709551615 does not fit a property-list integer (at most 9223372036854775807)"),
                    (NSNumber(value: UInt64.max), "18446744073709551615 does not fit a property-list integer (at most 9223372036854775807)"),
                    ([1, UInt64.max] as [Any], "at [1]: 18446744073709551615 does not fit a property-list integer (at most 9223372036854775807)"),
                ]
                store.set("old", forKey: "k")
                for (object, reason) in tooLarge {
                    store.set(object as Any?, forKey: "k")
                    #expect(throws: KVStoreError.invalidValue(key: "k", reason: reason)) { try store.setObject(object, forKey: "k") }
                }
                #expect(store.value(forKey: "k") == .string("old"))
            }
        }

        /// What Apple's getters that return objects make of one stored number.
        struct ObjectCasts: Sendable, CustomTestStringConvertible {
            var stored: PropertyListValue
            var int: Int?
            var int64: Int64?
            var double: Double?
            var bool: Bool?
            var testDescription: String { "\(stored)" }
        }

        static let objectCasts: [ObjectCasts] = [
            ObjectCasts(stored: .bool(true), int: 1, int64: 1, double: 1, bool: true),
            ObjectCasts(stored: .bool(false), int: 0, int64: 0, double: 0, bool: false),
            ObjectCasts(stored: .integer(1), int: 1, int64: 1, double: 1, bool: true),
            ObjectCasts(stored: .integer(0), int: 0, int64: 0, double: 0, bool: false),
            ObjectCasts(stored: .integer(42), int: 42, int64: 42, double: 42, bool: nil),
            ObjectCasts(stored: .integer(.max), int: .max, int64: .max, double: nil, bool: nil),
            ObjectCasts(stored: .real(2.5), int: nil, int64: nil, double: 2.5, bool: nil),
            ObjectCasts(stored: .real(2), int: 2, int64: 2, double: 2, bool: nil),
        ]

        @Test("object, array, dictionary and dictionaryRepresentation give numbers and Booleans as NSNumber (9.4)",
              arguments: StoreKind.allCases, objectCasts)
        func numbersBridgeAsNSNumber(kind: StoreKind, casts: ObjectCasts) async throws {
            try await withStore(kind) { _, store in
                try store.setValue(casts.stored, forKey: "alone")
                try store.setValue(.array([casts.stored]), forKey: "array")
                try store.setValue(.dictionary(["n": casts.stored]), forKey: "dictionary")
                try store.setValue(.array([.dictionary(["n": .array([casts.stored])])]), forKey: "deep")
                let deep = ((store.array(forKey: "deep")?.first as? [String: Any])?["n"] as? [Any])?.first
                let readings: [(String, Any?)] = [
                    ("object", store.object(forKey: "alone")),
                    ("array", store.array(forKey: "array")?.first),
                    ("object array", (store.object(forKey: "array") as? [Any])?.first),
                    ("dictionary", store.dictionary(forKey: "dictionary")?["n"]),
                    ("object dictionary", (store.object(forKey: "dictionary") as? [String: Any])?["n"]),
                    ("dictionaryRepresentation", store.dictionaryRepresentation["alone"]),
                    ("deep", deep),
                ]
                for (getter, object) in readings {
                    #expect(object is NSNumber, "\(getter)")
                    #expect(object as? Int == casts.int, "\(getter) as? Int")
                    #expect(object as? Int64 == casts.int64, "\(getter) as? Int64")
                    #expect(object as? Double == casts.double, "\(getter) as? Double")
                    #expect(object as? Bool == casts.bool, "\(getter) as? Bool")
                }
            }
        }

        @Test("a stored true reads as 1 in typed arrays and dictionaries, as on Apple platforms (9.4)",
              arguments: StoreKind.allCases)
        func typedCollections(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                store.set([true, false, 1, 0] as [Any]?, forKey: "flags")
                store.set(["on": true] as [String: Any]?, forKey: "table")
                #expect(store.array(forKey: "flags") as? [Int] == [1, 0, 1, 0])
                #expect(store.array(forKey: "flags") as? [Bool] == [true, false, true, false])
                #expect(store.array(forKey: "flags") as? [Double] == [1, 0, 1, 0])
                #expect(store.dictionary(forKey: "table") as? [String: Int] == ["on": 1])
                #expect(store.dictionary(forKey: "table") as? [String: Bool] == ["on": true])
                #expect(store.value(forKey: "flags") == .array([.bool(true), .bool(false), .integer(1), .integer(0)]))
            }
        }

        @Test("what object(forKey:) returns, written back with set(_:forKey:), is the same value, bit for bit",
              arguments: StoreKind.allCases)
        func objectsWriteBackUnchanged(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let date = Date(timeIntervalSinceReferenceDate: 0.1)
                let values: [PropertyListValue] = [
                    .bool(true), .bool(false), .integer(1), .integer(0), .integer(-7), .integer(.min), .real(1), .real(0),
                    .real(-0.0), .real(.nan), .real(.infinity), .real(0.1), .string("1"), .date(date), .data(Data([1, 0])),
                    .array([.bool(true), .integer(1), .real(1), .array([.bool(false)])]),
                    .dictionary(["b": .bool(true), "i": .integer(1), "r": .real(1), "d": .dictionary(["z": .bool(false)])]),
                ]
                for (index, value) in values.enumerated() {
                    try store.setValue(value, forKey: "original")
                    store.set(store.object(forKey: "original"), forKey: "copy\(index)")
                    #expect(sameBits(store.value(forKey: "copy\(index)"), value), "\(value)")
                }
            }
        }
    }
}

/// Whether two values are equal, reals and dates compared by their bits (so
/// NaN equals itself and -0.0 differs from 0.0).
func sameBits(_ lhs: PropertyListValue?, _ rhs: PropertyListValue?) -> Bool {
    switch (lhs, rhs) {
    case let (.real(a)?, .real(b)?): a.bitPattern == b.bitPattern
    case let (.date(a)?, .date(b)?): a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
    case let (.array(a)?, .array(b)?): a.count == b.count && zip(a, b).allSatisfy { sameBits($0, $1) }
    case let (.dictionary(a)?, .dictionary(b)?): a.keys == b.keys && a.allSatisfy { sameBits($0.value, b[$0.key]) }
    default: lhs == rhs
    }
}
