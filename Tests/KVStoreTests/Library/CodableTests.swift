import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// Codable values stored as property lists.
    @Suite("Codable values")
    struct CodableTests {
        struct Profile: Codable, Equatable {
            var name: String
            var age: Int
            var joined: Date
            var avatar: Data
            var tags: [String]
            var nickname: String?
        }

        static let profile = Profile(name: "Ada", age: 36, joined: Date(timeIntervalSince1970: 1_700_000_000.25),
                                     avatar: Data([1, 2]), tags: ["math", "engines"], nickname: nil)

        @Test("a struct is stored as a dictionary, readable as XML on a mount, and reads back equal",
              arguments: StoreKind.allCases)
        func structRoundTrip(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                try store.set(encodable: Self.profile, forKey: "profile")
                #expect(store.value(forKey: "profile") == .dictionary([
                    "name": .string("Ada"), "age": .integer(36), "joined": .date(Self.profile.joined),
                    "avatar": .data(Data([1, 2])), "tags": .array([.string("math"), .string("engines")]),
                ]))
                let file = String(decoding: FileForm.encode(store.value(forKey: "profile")!), as: UTF8.self)
                #expect(file.contains("<key>name</key>") && file.contains("<string>Ada</string>"))
                #expect(try store.decodable(Profile.self, forKey: "profile") == Self.profile)
            }
        }

        @Test("scalars, arrays and raw-value enums are stored as themselves")
        func scalars() throws {
            enum Theme: String, Codable { case dark }
            let store = InMemoryKeyValueStore()
            try store.set(encodable: 5, forKey: "int")
            try store.set(encodable: "text", forKey: "string")
            try store.set(encodable: [1.5, 2], forKey: "reals")
            try store.set(encodable: Theme.dark, forKey: "theme")
            #expect(store.value(forKey: "int") == .integer(5))
            #expect(store.value(forKey: "string") == .string("text"))
            #expect(store.value(forKey: "reals") == .array([.real(1.5), .real(2)]))
            #expect(store.value(forKey: "theme") == .string("dark"))
            #expect(try store.decodable(Theme.self, forKey: "theme") == .dark)
            #expect(try store.decodable([Double].self, forKey: "reals") == [1.5, 2])
        }

        @Test("nil removes the key; a missing key decodes as nil")
        func optionals() throws {
            let store = InMemoryKeyValueStore()
            try store.set(encodable: "x", forKey: "k")
            try store.set(encodable: nil as String?, forKey: "k")
            #expect(store.value(forKey: "k") == nil)
            #expect(try store.decodable(Profile.self, forKey: "k") == nil)
        }

        @Test("a stored value of another type throws invalidValue saying what did not match")
        func typeMismatch() throws {
            let store = InMemoryKeyValueStore()
            store.set("not a number", forKey: "k")
            let mismatch = #expect(throws: KVStoreError.self) { try store.decodable(Int.self, forKey: "k") }
            guard case let .invalidValue(key, reason)? = mismatch else {
                Issue.record("expected invalidValue")
                return
            }
            #expect(key == "k")
            #expect(reason.hasPrefix("the stored string cannot be read as Int: "))

            try store.setValue(.dictionary(["name": .string("Ada")]), forKey: "profile")
            let incomplete = #expect(throws: KVStoreError.self) { try store.decodable(Profile.self, forKey: "profile") }
            guard case let .invalidValue(_, missing)? = incomplete else {
                Issue.record("expected invalidValue")
                return
            }
            #expect(missing.contains("age"))
        }

        @Test("a value that cannot be encoded throws invalidValue; quota errors come through as they are")
        func encodingErrors() throws {
            struct Refuses: Encodable {
                func encode(to encoder: any Encoder) throws {
                    throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no, thanks"))
                }
            }
            let store = InMemoryKeyValueStore()
            #expect(throws: KVStoreError.invalidValue(key: "k", reason: "cannot store Refuses as a property list: no, thanks")) {
                try store.set(encodable: Refuses(), forKey: "k")
            }
            #expect(throws: KVStoreError.valueTooLarge(key: "k", bytes: Limits.maxValueBytes + 1)) {
                try store.set(encodable: Data(count: Limits.maxValueBytes + 1), forKey: "k")
            }
            #expect(store.values.isEmpty)
        }
    }
}
