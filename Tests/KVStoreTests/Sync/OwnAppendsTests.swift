import Foundation
import Testing
@testable import KVStore

/// Issue 24 item 1: this device's own journal has one owner (``OwnJournal``),
/// whose writer moves its reader past every append: nothing reads the
/// device's own appends back, while what its other processes append still
/// reaches it at once through the watcher of its folder.
@Suite("Own appends")
struct OwnAppendsTests {
    let fixture = SyncFixture()

    /// How many records `store`'s reader of its own folder has returned.
    private func recordsRead(_ store: DeviceStore) -> Int {
        store.journal.folder.withLock { $0.reader.recordsRead }
    }

    @Test("a mount's 300 writes, its watcher running and refreshes between them: none read back; another process's 20 writes: each read once, through the watcher, the median within 5 ms")
    func ownAppendsAreNotReadBack() throws {
        let mount = try DeviceStore(syncDirectory: URL(fileURLWithPath: fixture.root.path + "/sync"),
                                    stateDirectory: URL(fileURLWithPath: fixture.root.path + "/state-a"),
                                    deviceName: "a", owner: "mount /mnt/test", warn: fixture.warnings.add)
        let watcher = SyncWatcher(store: mount, pollInterval: 3600)  // no polling: only inotify brings the other process's writes
        defer { watcher.stop(); mount.close(); fixture.cleanup() }
        let before = recordsRead(mount)
        for index in 0..<300 {
            try mount.set(.integer(Int64(index)), forKey: StoreKey("k\(index % 30)"))
            if index % 50 == 0 { mount.refresh() }
        }
        mount.refresh()
        usleep(200_000)  // time for the watcher to read them, had it woken for them
        #expect(recordsRead(mount) == before, "the mount read \(recordsRead(mount) - before) of its own records back")

        let program = try fixture.open("a")  // the same state directory: another process of the device
        defer { program.close() }
        var delays: [Duration] = []
        for index in 0..<20 {
            try program.set(.integer(Int64(index)), forKey: "from-program")
            let start = ContinuousClock.now
            while mount.entry(forKey: "from-program")?.value != .integer(Int64(index)), start.duration(to: .now) < .seconds(5) { usleep(100) }
            delays.append(start.duration(to: .now))
        }
        #expect(mount.entry(forKey: "from-program")?.value == .integer(19))
        #expect(recordsRead(mount) == before + 20, "each of the other process's records is read once")
        let median = delays.sorted()[delays.count / 2]
        #expect(median < .milliseconds(5), "median \(median), all \(delays)")
    }
}
