import Foundation
import Synchronization
import Testing
@testable import KVStore

/// Thousands of device folders (planted, or a large fleet) cost the readers
/// and writers of a store nothing: the health check and the status look at
/// the folders without the store's lock, and a refresh holds it for one
/// folder at a time, reading only the folders that changed.
@Suite("Thousands of device folders")
struct ManyFoldersTests {
    /// A store "b" beside device "a" (which wrote `k = 1`) and `count` empty folders named like devices.
    private func fixture(folders count: Int) throws -> (SyncFixture, a: DeviceStore, b: DeviceStore) {
        let fixture = SyncFixture()
        let a = try fixture.open("a")
        try a.set(.integer(1), forKey: "k")
        let devices = fixture.root.path + "/sync/devices/"
        for n in 1...count { mkdir(devices + String(format: "%032x", n), 0o700) }
        return (fixture, a, try fixture.open("b"))
    }

    @Test("reads go on while the health check, and while a refresh, look through 6000 folders: none waits a third of their time")
    func readsGoOnWhileFoldersAreLookedAt() throws {
        let (fixture, a, b) = try fixture(folders: 6000)
        defer { a.close(); b.close(); fixture.cleanup() }
        // Before, the health check read every folder's small files with the lock held (reads waited up to
        // 4.8 s at 20,000 folders in a release build), and a refresh read every folder with it held: a
        // read then waited about half the time of two.
        let health = longestRead(of: b) { for _ in 1...2 { b.logHealth(force: true) } }
        #expect(health.waited < health.took / 3, "a read waited \(health.waited) s during two health checks of \(health.took) s")
        let refresh = longestRead(of: b) { for _ in 1...2 { b.refresh() } }
        #expect(refresh.waited < refresh.took / 3, "a read waited \(refresh.waited) s during two refreshes of \(refresh.took) s")
    }

    /// How long `work` took, and the longest a read of `store` waited meanwhile (a read every millisecond).
    private func longestRead(of store: DeviceStore, during work: () -> Void) -> (waited: Double, took: Double) {
        let done = Atomic(false), worst = Mutex(0.0)
        let reader = Thread {
            while !done.load(ordering: .acquiring) {
                let start = Date()
                _ = store.value(forKey: "k")
                let waited = Date().timeIntervalSince(start)
                worst.withLock { $0 = max($0, waited) }
                usleep(1000)
            }
        }
        reader.start()
        let start = Date()
        work()
        let took = Date().timeIntervalSince(start)
        done.store(true, ordering: .releasing)
        while !reader.isFinished { usleep(1000) }
        return (worst.withLock { $0 }, took)
    }

    @Test("a refresh of the changed folders only finds what changed: a record appended, a new device, a folder made again")
    func aRefreshOfChangedFoldersFindsWhatChanged() throws {
        let (fixture, a, b) = try fixture(folders: 200)
        defer { a.close(); b.close(); fixture.cleanup() }
        b.refresh(onlyChangedFolders: true)
        try a.set(.integer(2), forKey: "k")  // appended to the segment b reads: its size changed
        b.refresh(onlyChangedFolders: true)
        #expect(b.value(forKey: "k") == .integer(2))
        let c = try fixture.open("c")
        defer { c.close() }
        try c.set(.string("c"), forKey: "c")
        b.refresh(onlyChangedFolders: true)
        #expect(b.value(forKey: "c") == .string("c"))
        // Unchanged folders are passed over, however often asked; what changes in them is still found.
        for _ in 1...3 { b.refresh(onlyChangedFolders: true) }
        try a.set(.integer(3), forKey: "k")
        b.refresh(onlyChangedFolders: true)
        #expect(b.value(forKey: "k") == .integer(3))
    }

    @Test("the status follows the folders: a name and a progress that arrive later, and a folder that goes")
    func theStatusFollowsTheFolders() throws {
        let (fixture, a, b) = try fixture(folders: 200)
        defer { a.close(); b.close(); fixture.cleanup() }
        let planted = String(format: "%032x", 7)
        #expect(b.status().devices.first { $0.id == planted }?.name == planted)
        let folder = fixture.root.path + "/sync/devices/" + planted
        try Data(#"{"name":"planted"}"#.utf8).write(to: URL(fileURLWithPath: folder + "/device.json"))
        #expect(b.status().devices.first { $0.id == planted }?.name == "planted")
        #expect(b.status().devices.first { $0.id == a.deviceID.hex }?.closed == false)
        a.close()  // publishes its progress, closed
        #expect(b.status().devices.first { $0.id == a.deviceID.hex }?.state == .stopped)
        try FileManager.default.removeItem(atPath: fixture.root.path + "/sync/devices/" + String(format: "%032x", 8))
        #expect(!b.status().devices.contains { $0.id == String(format: "%032x", 8) && $0.state != .vanished })
    }
}
