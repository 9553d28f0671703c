import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// The sync-directory store: devices sharing one store, its lock, and its first sync.
    @Suite("UbiquitousKeyValueStore")
    struct UbiquitousKeyValueStoreTests {
        @Test("two devices of one sync directory share values, and another device's write arrives by itself")
        func devicesShare() async throws {
            try await withStore(.syncDirectory) { fixture, store in
                let other = try fixture.openDevice("other")
                let recorder = NotificationRecorder(store)
                store.set("from this", forKey: "a")
                other.synchronize()
                #expect(other.string(forKey: "a") == "from this")

                other.set(Int64(2), forKey: "b")
                // No synchronize(): the watcher notices the sync directory changed.
                #expect(await recorder.waitFor(["b"], reason: NSUbiquitousKeyValueStoreServerChange))
                #expect(store.longLong(forKey: "b") == 2)
            }
        }

        @Test("values survive closing and reopening the device")
        func reopen() async throws {
            try await withStore(.syncDirectory) { fixture, _ in
                do {
                    let device = try fixture.openDevice("reopened")
                    device.set("kept", forKey: "k")
                }  // dropped: closed, lock released
                let device = try fixture.openDevice("reopened")
                #expect(device.string(forKey: "k") == "kept")
            }
        }

        @Test("two stores opened with one state directory are one device: each gets the other's writes at once, as ServerChange")
        func oneStateDirectoryIsOneDevice() async throws {
            try await withStore(.syncDirectory) { fixture, _ in
                let first = try fixture.openDevice("twice")
                let second = try fixture.openDevice("twice")
                let recorder = NotificationRecorder(second)
                first.set("from the first", forKey: "shared")
                // No synchronize(): the watcher sees the device's own folder change.
                #expect(await recorder.waitFor(["shared"], reason: NSUbiquitousKeyValueStoreServerChange))
                #expect(second.string(forKey: "shared") == "from the first")
                let devices = try FileManager.default.contentsOfDirectory(atPath: fixture.syncDirectory.path + "/devices")
                #expect(devices.count == 2, "\(devices)")  // the fixture's own device, and this one
            }
        }

        @Test("the InitialSyncChange waits for synchronize(), so the program can register first")
        func initialSyncWaitsForSynchronize() async throws {
            try await withStore(.syncDirectory) { fixture, store in
                store.set("while away", forKey: "news")
                let late = try fixture.openDevice("late")
                let recorder = NotificationRecorder(late)
                try await Task.sleep(for: .milliseconds(200))
                #expect(recorder.all.isEmpty)
                late.synchronize()
                #expect(await recorder.waitFor(["news"], reason: NSUbiquitousKeyValueStoreInitialSyncChange))
            }
        }

        @Test("subscribing to changes also releases the InitialSyncChange")
        func initialSyncReachesChanges() async throws {
            try await withStore(.syncDirectory) { fixture, store in
                store.set("while away", forKey: "news")
                let late = try fixture.openDevice("late")
                let received = await collect(late.changes, covering: ["news"])
                #expect(received.map(\.reason) == [.initialSyncChange])
            }
        }
    }
}
