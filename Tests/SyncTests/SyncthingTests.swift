import Foundation
import KVStore
import Testing

/// Two devices on two folders that Syncthing keeps identical, on 127.0.0.1.
@Suite("Syncthing between two folders")
struct SyncthingTests {
    @Test(.enabled(if: SyncthingPair.missingProgram == nil, "needs syncthing and curl"), .timeLimit(.minutes(2)),
          arguments: Sealing.allCases)
    func concurrentWritesOnBothSidesAgreeWithoutConflictCopies(_ sealing: Sealing) throws {
        let folder = TemporaryFolder("kvfs-transport")
        defer { folder.cleanup() }
        let folders = [folder.path + "/A", folder.path + "/B"]
        let pair = try SyncthingPair(work: folder.path + "/syncthing", folders: folders)
        defer { pair.stop() }
        let a = try WatchedDevice("a", sync: folders[0], root: folder.path, sealing)
        defer { a.close() }
        // The second device starts once the store id (and a sealed store's roster) has arrived, as on a second machine.
        try pair.scan(0)
        try waitUntil(seconds: 20, "store-id in B") { FileManager.default.fileExists(atPath: folders[1] + "/store-id") }
        let b = try WatchedDevice("b", sync: folders[1], root: folder.path, sealing)
        defer { b.close() }
        writeConcurrently([a.store, b.store], writes: 100)
        try waitForEqualStores([a.store, b.store], seconds: 40, every: 0.2) {
            try pair.scan(0)
            try pair.scan(1)
        }
        #expect(a.store.values.count == 2 * 90 + 3)
        #expect(conflictCopies(in: folder.path).isEmpty)
    }
}
