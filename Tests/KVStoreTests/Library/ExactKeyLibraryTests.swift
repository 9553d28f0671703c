import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// Keys are their exact scalars through Apple's API, as in Apple's store:
    /// `café` with `é` as U+00E9 and with `e` + U+0301 are two keys.
    @Suite("Keys by their exact scalars")
    struct ExactKeyLibraryTests {
        static let composed = "caf\u{E9}", decomposed = "cafe\u{301}"

        /// Whether `key` is spelled with exactly the scalars of `spelling`.
        static func isSpelled(_ key: String, as spelling: String) -> Bool {
            key.unicodeScalars.elementsEqual(spelling.unicodeScalars)
        }

        @Test("object(forKey:) of each spelling gives its own value; removing one leaves the other", arguments: StoreKind.allCases)
        func eachSpellingHasItsValue(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                store.set("one", forKey: Self.composed)
                store.set(Int64(2), forKey: Self.decomposed)
                #expect(store.object(forKey: Self.composed) as? String == "one")
                #expect(store.object(forKey: Self.decomposed) as? Int == 2)
                #expect(store.values.count == 2)
                store.removeObject(forKey: Self.composed)
                #expect(store.object(forKey: Self.composed) == nil)
                #expect(store.longLong(forKey: Self.decomposed) == 2)
            }
        }

        @Test("another device's write names the key as it was spelled, and leaves the other spelling alone", arguments: StoreKind.allCases)
        func notificationsNameTheExactKey(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                store.set("mine", forKey: Self.composed)
                let recorder = NotificationRecorder(store)
                let changes = store.changes
                try fixture.changeExternally(["cafe\u{301}": .string("theirs")])
                #expect(await recorder.waitFor(["cafe\u{301}"], reason: NSUbiquitousKeyValueStoreServerChange))
                let posted = recorder.all.flatMap { $0.keys ?? [] }
                #expect(posted.allSatisfy { Self.isSpelled($0, as: Self.decomposed) }, "\(posted.map(\.unicodeScalars))")
                let received = await collect(changes, covering: ["cafe\u{301}"]).flatMap(\.keys)
                #expect(received.allSatisfy { Self.isSpelled("\($0)", as: Self.decomposed) })
                #expect(store.string(forKey: Self.composed) == "mine")
                #expect(store.string(forKey: Self.decomposed) == "theirs")
            }
        }

        @Test("dictionaryRepresentation and a dictionary value, Swift dictionaries that cannot hold both, keep the spelling first in UTF-8 order with its value",
              arguments: StoreKind.allCases)
        func swiftDictionariesKeepTheFirstInUTF8Order(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                store.set("one", forKey: Self.composed)
                store.set("two", forKey: Self.decomposed)
                let representation = store.dictionaryRepresentation
                #expect(representation.count == 1)
                // e + U+0301 (65 CC 81) comes before U+00E9 (C3 A9) in UTF-8.
                #expect(representation.allSatisfy { Self.isSpelled($0.key, as: Self.decomposed) && $0.value as? String == "two" })

                let document = #"<plist version="1.0"><dict><key>caf\#u{E9}</key><integer>1</integer><key>cafe\#u{301}</key><integer>2</integer></dict></plist>"#
                try store.setValue(PropertyListValue(propertyListData: Data(document.utf8)), forKey: "d")
                guard case let .dictionary(entries)? = store.value(forKey: "d") else {
                    Issue.record("not a dictionary")
                    return
                }
                #expect(entries.count == 2, "the store keeps both keys of the value")
                let swift = try #require(store.dictionary(forKey: "d"))
                #expect(swift.count == 1)
                #expect(swift.allSatisfy { Self.isSpelled($0.key, as: Self.decomposed) && $0.value as? Int == 2 })
            }
        }
    }
}
