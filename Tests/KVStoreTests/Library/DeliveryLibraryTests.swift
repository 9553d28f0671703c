import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// `deliveredTo(key:)` and `waitUntilDelivered(timeout:)` (docs/swift.md § Delivery).
    @Suite("Delivery through the library")
    struct DeliveryLibraryTests {
        @Test("waitUntilDelivered is true once the other device has read the write (its watcher reads it by itself), and deliveredTo names it")
        func deliveredToAnotherDevice() async throws {
            try await withStore(.syncDirectory) { fixture, store in
                let other = try fixture.openDevice("other")
                store.set("v", forKey: "k")
                #expect(await store.waitUntilDelivered(timeout: 10))
                #expect(store.deliveredTo(key: "k").map(\.name) == ["this", "other"])
                #expect(other.deliveredTo(key: "k").map(\.name) == ["other", "this"])
                #expect(store.deliveredTo(key: "missing").isEmpty)
            }
        }

        @Test("waitUntilDelivered is false after the timeout while an active device has not read the write")
        func timesOut() async throws {
            try await withStore(.syncDirectory) { fixture, store in
                // A device that runs without a watcher, and so reads nothing until it refreshes.
                let other = try DeviceStore(syncDirectory: fixture.syncDirectory, stateDirectory: fixture.folder.appendingPathComponent("state-raw"),
                                            deviceName: "raw")
                defer { other.close() }
                store.set("v", forKey: "k")
                let started = ContinuousClock.now
                #expect(await store.waitUntilDelivered(timeout: 0.3) == false)
                #expect(ContinuousClock.now - started >= .milliseconds(300))
                #expect(store.deliveredTo(key: "k").map(\.name) == ["this"])
                other.refresh()
                #expect(await store.waitUntilDelivered(timeout: 10))
            }
        }

        @Test("the in-memory store has no devices: nothing to wait for, nobody to name")
        func inMemory() async {
            let store = InMemoryKeyValueStore()
            store.set("v", forKey: "k")
            #expect(await store.waitUntilDelivered(timeout: 0))
            #expect(store.deliveredTo(key: "k").isEmpty)
        }
    }
}
