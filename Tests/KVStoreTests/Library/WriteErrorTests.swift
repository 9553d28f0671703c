import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// The throwing API reports the exact error; Apple's API posts
    /// QuotaViolationChange for quota; a refused write changes nothing.
    @Suite("Write errors")
    struct WriteErrorTests {
        @Test("an empty or too-long key throws which and how long", arguments: StoreKind.allCases)
        func keyErrors(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let tooLong = String(repeating: "k", count: 129)
                let tooLongKey = StoreKey(tooLong)
                #expect(throws: KVStoreError.emptyKey) { try store.setValue(.integer(1), forKey: "") }
                #expect(throws: KVStoreError.keyTooLong(key: tooLongKey, utf16Units: 129)) { try store.setValue(.integer(1), forKey: tooLong) }
                #expect(throws: KVStoreError.keyTooLong(key: tooLongKey, utf16Units: 129)) { try store.removeValue(forKey: tooLong) }
                #expect(throws: KVStoreError.keyTooLong(key: tooLongKey, utf16Units: 129)) { try store.setObject("x", forKey: tooLong) }
                #expect(store.values.isEmpty)
            }
        }

        @Test("one value over 1 MB throws valueTooLarge with its size", arguments: StoreKind.allCases)
        func valueTooLarge(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                try store.setValue(.string("small"), forKey: "big")
                let size = Limits.maxValueBytes + 1
                #expect(throws: KVStoreError.valueTooLarge(key: "big", bytes: size)) {
                    try store.setValue(.data(Data(count: size)), forKey: "big")
                }
                #expect(store.string(forKey: "big") == "small")
            }
        }

        @Test("values together over 1 MB throw storeFull with how far over", arguments: StoreKind.allCases)
        func storeFull(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                try store.setValue(.data(Data(count: 600_000)), forKey: "first")
                #expect(throws: KVStoreError.storeFull(key: "second", over: 1_200_000 - Limits.maxTotalBytes)) {
                    try store.setValue(.data(Data(count: 600_000)), forKey: "second")
                }
                #expect(store.value(forKey: "second") == nil)
                // Replacing a value counts only the difference.
                try store.setValue(.data(Data(count: Limits.maxTotalBytes)), forKey: "first")
            }
        }

        @Test("the 1025th key throws tooManyKeys; replacing a key still works", arguments: StoreKind.allCases)
        func tooManyKeys(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                for index in 0..<Limits.maxKeys { try store.setValue(.bool(true), forKey: "k\(index)") }
                #expect(throws: KVStoreError.tooManyKeys(key: "one-more")) { try store.setValue(.bool(true), forKey: "one-more") }
                try store.setValue(.bool(false), forKey: "k0")
                #expect(store.values.count == Limits.maxKeys)
            }
        }

        @Test("a write over quota through Apple's API changes nothing and posts QuotaViolationChange",
              arguments: StoreKind.allCases)
        func quotaViolationPosts(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let recorder = NotificationRecorder(store)
                let changes = store.changes
                store.set(Data(count: 700_000) as Data?, forKey: "photo")
                store.set(Data(count: 700_000) as Data?, forKey: "video")
                #expect(store.data(forKey: "photo")?.count == 700_000)
                #expect(store.data(forKey: "video") == nil)

                #expect(await recorder.waitFor(["video"], reason: NSUbiquitousKeyValueStoreQuotaViolationChange))
                #expect(recorder.all.allSatisfy { $0.objectIsStore && $0.keys == ["video"] })
                let received = await collect(changes, covering: ["video"])
                #expect(received == [StoreChange(reason: .quotaViolationChange, keys: ["video"], time: received.first?.time ?? Date())])
            }
        }

        @Test("a quota refusal through the throwing API is posted too, as the change log records it",
              arguments: StoreKind.allCases)
        func quotaViolationThrowingPosts(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let recorder = NotificationRecorder(store)
                #expect(throws: KVStoreError.valueTooLarge(key: "huge", bytes: Limits.maxValueBytes + 1)) {
                    try store.setValue(.data(Data(count: Limits.maxValueBytes + 1)), forKey: "huge")
                }
                #expect(await recorder.waitFor(["huge"], reason: NSUbiquitousKeyValueStoreQuotaViolationChange))
            }
        }

        @Test("a quota refusal is posted once, on the writer's thread, before the setter returns (9.6)",
              arguments: StoreKind.allCases)
        func quotaViolationIsSynchronous(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let recorder = NotificationRecorder(store)
                let writer = pthread_self()
                store.set(Data(count: Limits.maxValueBytes + 1) as Data?, forKey: "huge")
                #expect(throws: KVStoreError.valueTooLarge(key: "huge", bytes: Limits.maxValueBytes + 2)) {
                    try store.setValue(.data(Data(count: Limits.maxValueBytes + 2)), forKey: "huge")
                }
                let posted = recorder.all
                #expect(posted.map(\.keys) == [["huge"], ["huge"]])
                #expect(posted.allSatisfy { $0.reason == NSUbiquitousKeyValueStoreQuotaViolationChange && pthread_equal($0.thread, writer) != 0 })
                // Nothing more comes later: once a later change arrives, an echo would have too.
                try await fixture.settle(recorder)
                #expect(recorder.keys(reason: NSUbiquitousKeyValueStoreQuotaViolationChange) == ["huge"])
                #expect(recorder.all.filter { $0.reason == NSUbiquitousKeyValueStoreQuotaViolationChange }.count == 2)
            }
        }
    }
}
