import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// `.default` and `init()` (issue 9, item 5), each in a child process of its
    /// own (an exit test) with its own default store, never the user's.
    @Suite("The default store")
    struct DefaultStoreTests {
        @Test("NSUbiquitousKeyValueStore() is the default store, as the same device as .default")
        func initSharesTheDefaultDevice() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                try await withDefaultStore(in: home) { home in
                    let made = NSUbiquitousKeyValueStore()
                    let shared = NSUbiquitousKeyValueStore.default
                    #expect(made !== shared)
                    let madeRecorder = NotificationRecorder(made)
                    let sharedRecorder = NotificationRecorder(shared)

                    made.set("from init()", forKey: "a")
                    shared.set(Int64(2), forKey: "b")
                    #expect(shared.string(forKey: "a") == "from init()")   // at once: one device, no sync needed
                    #expect(made.longLong(forKey: "b") == 2)
                    #expect(made.synchronize() && shared.synchronize())
                    // One device: one folder in the sync directory, and its own writes are posted to nobody.
                    let devices = try FileManager.default.contentsOfDirectory(atPath: DeviceStore.defaultSyncDirectory
                        .appendingPathComponent("devices").path)
                    #expect(devices.count == 1)
                    // Another device's later write is posted to both, after whatever their own writes were posted.
                    let other = try UbiquitousKeyValueStore(syncDirectory: DeviceStore.defaultSyncDirectory,
                                                            stateDirectory: home.appendingPathComponent("other"), deviceName: "other")
                    other.set(true, forKey: "sentinel")
                    #expect(await madeRecorder.waitFor(["sentinel"], reason: NSUbiquitousKeyValueStoreServerChange))
                    #expect(await sharedRecorder.waitFor(["sentinel"], reason: NSUbiquitousKeyValueStoreServerChange))
                    #expect((madeRecorder.all + sharedRecorder.all).allSatisfy { $0.keys == ["sentinel"] })

                    // Another object made and dropped leaves the device open for the others.
                    do { NSUbiquitousKeyValueStore().set("gone", forKey: "c") }
                    #expect(shared.string(forKey: "c") == "gone")
                    shared.set("still open", forKey: "d")
                    #expect(made.string(forKey: "d") == "still open")
                }
            }
        }

        @Test("another device's write reaches .default and init() objects alike")
        func externalChangesReachEveryObject() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                try await withDefaultStore(in: home) { home in
                    let made = NSUbiquitousKeyValueStore()
                    let madeRecorder = NotificationRecorder(made)
                    let sharedRecorder = NotificationRecorder(NSUbiquitousKeyValueStore.default)
                    let other = try UbiquitousKeyValueStore(syncDirectory: DeviceStore.defaultSyncDirectory,
                                                            stateDirectory: home.appendingPathComponent("other"), deviceName: "other")
                    other.set("dark", forKey: "theme")
                    #expect(await madeRecorder.waitFor(["theme"], reason: NSUbiquitousKeyValueStoreServerChange))
                    #expect(await sharedRecorder.waitFor(["theme"], reason: NSUbiquitousKeyValueStoreServerChange))
                    #expect(made.string(forKey: "theme") == "dark")
                }
            }
        }
    }
}
