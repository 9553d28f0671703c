import Foundation
import KVStore
import Testing

/// Three devices, each a store with its watcher, on one folder (one host, NFS, a shared disk).
@Suite("One shared folder")
struct SharedFolderTests {
    @Test(arguments: Sealing.allCases)
    func threeWatchedDevicesWritingAtOnceAgree(_ sealing: Sealing) throws {
        let folder = TemporaryFolder("kvfs-transport")
        defer { folder.cleanup() }
        let devices = try ["one", "two", "three"].map { try WatchedDevice($0, sync: folder.path + "/sync", root: folder.path, sealing) }
        defer { devices.forEach { $0.close() } }
        let stores = devices.map(\.store)
        writeConcurrently(stores, writes: 200)
        try waitForEqualStores(stores, seconds: 10)
        #expect(stores[0].values.count == 3 * (200 - 20) + 3)
        #expect(conflictCopies(in: folder.path).isEmpty)
        let late = try WatchedDevice("late", sync: folder.path + "/sync", root: folder.path, sealing)
        defer { late.close() }
        #expect(late.store.values == stores[0].values)
    }
}
