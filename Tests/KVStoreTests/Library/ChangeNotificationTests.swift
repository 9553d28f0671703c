import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// didChangeExternallyNotification and the `changes` sequence, with Apple's names and values.
    @Suite("Change notifications")
    struct ChangeNotificationTests {
        @Test("Apple's notification name, userInfo keys and reason codes")
        func appleNames() {
            #expect(UbiquitousKeyValueStore.didChangeExternallyNotification.rawValue
                == "NSUbiquitousKeyValueStoreDidChangeExternallyNotification")
            #expect(NSUbiquitousKeyValueStore.didChangeExternallyNotification == InMemoryKeyValueStore.didChangeExternallyNotification)
            #expect(NSUbiquitousKeyValueStoreChangeReasonKey == "NSUbiquitousKeyValueStoreChangeReasonKey")
            #expect(NSUbiquitousKeyValueStoreChangedKeysKey == "NSUbiquitousKeyValueStoreChangedKeysKey")
            let reasons: [Int] = [NSUbiquitousKeyValueStoreServerChange, NSUbiquitousKeyValueStoreInitialSyncChange,
                                  NSUbiquitousKeyValueStoreQuotaViolationChange, NSUbiquitousKeyValueStoreAccountChange]
            #expect(reasons == [0, 1, 2, 3])
            #expect(NSUbiquitousKeyValueStore.self == UbiquitousKeyValueStore.self)
        }

        @Test("another device's change posts the notification (object, reason, keys) and reaches the sequence",
              arguments: StoreKind.allCases)
        func externalChange(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                store.set("mine", forKey: "removed")
                let recorder = NotificationRecorder(store)
                let changes = store.changes
                try fixture.changeExternally(["theme": .string("dark"), "volume": .integer(7), "removed": nil])

                let keys: Set<StoreKey> = ["theme", "volume", "removed"]
                #expect(await recorder.waitFor(keys, reason: NSUbiquitousKeyValueStoreServerChange))
                for post in recorder.all {
                    #expect(post.objectIsStore)
                    #expect(post.reasonNumber == NSNumber(value: NSUbiquitousKeyValueStoreServerChange))
                    #expect(post.keys == post.keys?.sorted())
                }
                let received = await collect(changes, covering: keys)
                #expect(Set(received.flatMap(\.keys)) == keys)
                #expect(received.allSatisfy { $0.reason == .serverChange })
                #expect(store.string(forKey: "theme") == "dark")
                #expect(store.longLong(forKey: "volume") == 7)
                #expect(store.object(forKey: "removed") == nil)
            }
        }

        @Test("the program's own writes post nothing", arguments: StoreKind.allCases)
        func ownWritesAreSilent(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let recorder = NotificationRecorder(store)
                store.set("mine", forKey: "own")
                store.removeObject(forKey: "own")
                try store.setValue(.integer(1), forKey: "own-throwing")
                try await fixture.settle(recorder)
                #expect(!recorder.all.contains { post in post.keys?.contains { $0.hasPrefix("own") } ?? true })
            }
        }

        @Test("every subscriber to changes gets every change; a dropped store ends the sequence")
        func subscribers() async throws {
            var store: InMemoryKeyValueStore? = InMemoryKeyValueStore()
            let first = store!.changes
            let second = store!.changes
            store!.simulateExternalChange(["a": .integer(1)], reason: .initialSyncChange)
            #expect(await collect(first, covering: ["a"]).map(\.reason) == [.initialSyncChange])
            #expect(await collect(second, covering: ["a"]).map(\.reason) == [.initialSyncChange])
            store = nil
            var iterator = first.makeAsyncIterator()
            #expect(await iterator.next() == nil)
        }
    }
}
