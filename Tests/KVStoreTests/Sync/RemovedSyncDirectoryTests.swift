import Foundation
import Testing
@testable import KVStore

/// Issue 7.18: the sync directory deleted under a running device.
@Suite("A sync directory removed under a running device")
struct RemovedSyncDirectoryTests {
    let fixture = SyncFixture()

    @Test("the device writes its folder and the store id again, so its next start sees the same store: no AccountChange")
    func theStoreKeepsItsID() throws {
        defer { fixture.cleanup() }
        var store = try fixture.open("a")
        try store.set(.integer(1), forKey: "k")
        let id = store.storeID
        try FileManager.default.removeItem(atPath: fixture.root.path + "/sync")
        store.refresh()
        #expect(SyncDirectory(path: fixture.root.path + "/sync").storeID() == id)
        try store.set(.integer(2), forKey: "j")
        store.close()
        store = try fixture.open("a")
        defer { store.close() }
        #expect(store.storeID == id)
        #expect(store.values == ["k": .integer(1), "j": .integer(2)])
        #expect(!String(decoding: store.changeLogContents(), as: UTF8.self).contains("AccountChange"))
    }
}
