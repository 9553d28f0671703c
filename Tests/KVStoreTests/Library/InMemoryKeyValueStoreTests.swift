import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// The in-memory store's own API: sizes, reset and simulated external changes.
    @Suite("InMemoryKeyValueStore")
    struct InMemoryKeyValueStoreTests {
        @Test("usage counts each value's file-form size, as the sync-directory store does")
        func usageIsFileFormSize() throws {
            let store = InMemoryKeyValueStore()
            try store.setValue(.string("abc"), forKey: "text")      // "abc\n"
            try store.setValue(.integer(42), forKey: "number")      // "42\n"
            try store.setValue(.array([.bool(true)]), forKey: "list")
            let listSize = FileForm.encode(.array([.bool(true)])).count
            #expect(store.usage == QuotaUsage(keys: 3, bytes: 4 + 3 + listSize))
            try store.setValue(.string(""), forKey: "text")         // an empty file
            try store.removeValue(forKey: "number")
            #expect(store.usage == QuotaUsage(keys: 2, bytes: listSize))
        }

        @Test("reset empties the store without posting")
        func reset() async throws {
            let store = InMemoryKeyValueStore()
            let recorder = NotificationRecorder(store)
            store.set("v", forKey: "k")
            store.reset()
            #expect(store.values.isEmpty)
            #expect(store.usage == QuotaUsage())
            store.simulateExternalChange(["sentinel": .bool(true)])
            #expect(recorder.all.count == 1)
        }

        @Test("a simulated change applies values and removals and posts its reason", arguments: ChangeReason.allCases)
        func simulate(reason: ChangeReason) throws {
            let store = InMemoryKeyValueStore()
            let recorder = NotificationRecorder(store)
            store.set("old", forKey: "gone")
            store.simulateExternalChange(["new": .string("value"), "gone": nil], reason: reason)
            #expect(store.string(forKey: "new") == "value")
            #expect(store.object(forKey: "gone") == nil)
            // Posted before simulateExternalChange returns.
            #expect(recorder.all.map(\.reason) == [reason.rawValue])
            #expect(recorder.all.first?.keys == ["gone", "new"])
        }
    }
}
