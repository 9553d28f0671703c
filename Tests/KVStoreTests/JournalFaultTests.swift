import Foundation
import LinuxSystem
import Synchronization
import SystemPackage
import Testing
@testable import KVStore

/// A full disk, I/O errors and torn appends under the journal, injected
/// through its ``JournalFile``s (as LevelDB's tests inject them through their
/// `Env`): no root, no small filesystem. The disk-full tests through a
/// mount (MountTests' DiskFullTests) need both.
@Suite("Journal faults")
struct JournalFaultTests {
    @Test("a write that meets a full disk, even part way through its record, changes nothing; once there is room the store goes on")
    func aFullDiskChangesNothing() throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open()
        try store.set(.string("old"), forKey: "k")
        // No room for the append; after compacting, its retry gets 10 bytes in; no room for anything after.
        fixture.disk.inject { $0.nextAppends = [(bytes: 0, errno: .noSpace), (bytes: 10, errno: .noSpace)]; $0.append = .noSpace }
        let error = #expect(throws: KVStoreError.self) { try store.set(.string("new"), forKey: "k") }
        #expect(error == .diskFull(path: fixture.segmentPath(of: store, 2)), "compacted, then tried once more in the new segment")
        #expect(try fixture.journalTails(of: store) == [false], "no part of the record was left in the segment")
        #expect(throws: KVStoreError.self) { try store.set(.integer(1), forKey: "other") }
        #expect(store.values == ["k": .string("old")])

        fixture.disk.inject { $0 = Faults() }
        try store.set(.string("new"), forKey: "k")
        try store.set(.integer(1), forKey: "other")
        store.close()
        #expect(try fixture.valuesOnDisk() == ["k": .string("new"), "other": .integer(1)])
    }

    @Test("EIO on an append is the store's I/O error, naming the file and the call; nothing is written, and the store goes on")
    func anIOErrorOnAppend() throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open()
        try store.set(.string("old"), forKey: "k")
        fixture.disk.inject { $0.append = .ioError }
        let error = #expect(throws: KVStoreError.self) { try store.set(.string("new"), forKey: "k") }
        #expect(error == .io(path: fixture.segmentPath(of: store, 1), reason: "cannot write (write: Input/output error)"))
        #expect(store.values == ["k": .string("old")])
        fixture.disk.inject { $0 = Faults() }
        try store.set(.string("new"), forKey: "k")
        store.close()
        #expect(try fixture.valuesOnDisk() == ["k": .string("new")])
    }

    @Test("EIO on fsync is the store's I/O error from flush, and the records stay to be synced once the disk answers")
    func anIOErrorOnSync() throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open()
        fixture.disk.inject { $0.sync = .ioError }
        try store.set(.string("kept"), forKey: "k")  // in the file: an append needs no fsync
        let error = #expect(throws: KVStoreError.self) { try store.flush() }
        #expect(error == .io(path: fixture.segmentPath(of: store, 1), reason: "cannot fsync journal (fsync: Input/output error)"))
        #expect(throws: KVStoreError.self) { try store.synchronize() }
        fixture.disk.inject { $0 = Faults() }
        try store.flush()
        #expect(fixture.disk.syncs > 0)
        store.close()
        #expect(try fixture.valuesOnDisk() == ["k": .string("kept")])
    }

    @Test("the write that makes a compaction due returns before the compaction is done, however long its fsyncs take; writes go on meanwhile")
    func compactionIsOffTheWritePath() throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open()
        store.journal.folder.withLock { $0.writer.compactionFloor = 2000 }
        let stalled = Mutex(true), syncing = DispatchSemaphore(value: 0)
        // Every fsync stalls (the compaction's of the segment it retires first), as on a slow disk.
        fixture.disk.inject { $0.beforeSync = { syncing.signal(); while stalled.withLock({ $0 }) { usleep(1000) } } }
        let wrote = DispatchSemaphore(value: 0)
        Thread {
            for index in 0..<40 { try? store.set(.string(String(repeating: "v", count: 100)), forKey: StoreKey("k\(index)")) }
            wrote.signal()
        }.start()
        #expect(syncing.wait(timeout: .now() + 20) == .success, "no compaction started")
        #expect(wrote.wait(timeout: .now() + 10) == .success, "a write waited for the compaction")
        let folder = DeviceFolder(path: fixture.root.path + "/sync/devices/" + store.deviceID.hex)
        #expect(folder.listing().snapshots.isEmpty, "the snapshot was written while its fsync stalled")
        stalled.withLock { $0 = false }
        try store.flush()  // waits for the compaction
        #expect(!folder.listing().snapshots.isEmpty)
        store.close()
        #expect(try fixture.valuesOnDisk().count == 40)
    }

    @Test("another device reads the writes made while a compaction is slow before its snapshot is written: it goes on from the closed segment into the next")
    func writesDuringACompactionReachOthers() throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open()
        let other = try fixture.open("b", onDisk: true)
        store.journal.folder.withLock { $0.writer.compactionFloor = 2000 }
        let stalled = Mutex(true)
        fixture.disk.inject { $0.beforeSync = { while stalled.withLock({ $0 }) { usleep(1000) } } }  // a slow disk
        for index in 0..<40 { try store.set(.string(String(repeating: "v", count: 100)), forKey: StoreKey("k\(index)")) }
        let folder = DeviceFolder(path: fixture.root.path + "/sync/devices/" + store.deviceID.hex)
        #expect(poll(seconds: 20) { folder.listing().segments.contains(2) }, "no compaction began")
        try store.set(.string("during"), forKey: "late")  // in segment 2, while the compaction stalls
        #expect(folder.listing().snapshots.isEmpty, "the snapshot was written while its fsync stalled")
        other.refresh()
        #expect(other.values.count == 41 && other.values["late"] == .string("during"), "\(other.values.keys.sorted())")
        stalled.withLock { $0 = false }
        try store.flush()  // waits for the compaction
        #expect(folder.listing().snapshots == [2])
        try store.set(.string("after"), forKey: "late")
        other.refresh()
        #expect(other.values.count == 41 && other.values["late"] == .string("after"))
        #expect(fixture.warnings.all.isEmpty, "\(fixture.warnings.all)")
        store.close()
        other.close()
    }

    @Test("an append torn part way (the process died before it could cut it off) is waited out by readers and cut off by the writer's next open")
    func aTornAppend() throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let writer = try fixture.open()
        try writer.set(.string("one"), forKey: "k1")
        // 12 bytes of the next record, and no truncate to take them back: as if the process died there.
        fixture.disk.inject { $0.nextAppends = [(bytes: 12, errno: .ioError)]; $0.truncate = .ioError }
        #expect(throws: KVStoreError.self) { try writer.set(.string("two"), forKey: "k2") }
        #expect(try fixture.journalTails(of: writer) == [true], "the torn record is in the segment")

        let reader = try fixture.open("reader", onDisk: true)
        reader.refresh()
        #expect(reader.values == ["k1": .string("one")])
        #expect(!fixture.warnings.contain("corrupt") && !fixture.warnings.contain("not whole records"), "\(fixture.warnings.all)")

        writer.close()  // and opened again, as after the process died
        let reopened = try fixture.open(onDisk: true)
        #expect(try fixture.journalTails(of: reopened) == [false], "the torn tail was cut off")
        try reopened.set(.string("three"), forKey: "k3")
        reader.refresh()
        #expect(reader.values == ["k1": .string("one"), "k3": .string("three")])
        #expect(fixture.warnings.all.isEmpty, "\(fixture.warnings.all)")
        reopened.close()
        reader.close()
    }
}

/// What the injected disk does to the calls that follow, until changed.
struct Faults {
    /// What the next appends do, in order: each writes only `bytes` of its
    /// record, then fails with `errno` (a disk filling up, a crash part way).
    var nextAppends: [(bytes: Int, errno: Errno)] = []
    /// Every append after those fails with this, writing nothing.
    var append: Errno?
    /// Every fsync fails with this.
    var sync: Errno?
    /// Every truncate fails with this, so the writer cannot take back a torn append.
    var truncate: Errno?
    /// Runs before each fsync: what another process does meanwhile.
    var beforeSync: (@Sendable () -> Void)?
}

/// Journal segments on the real disk, whose calls fail as ``Faults`` say.
final class FaultyJournalFiles: JournalFileOpener {
    private let faults = Mutex(Faults())
    private let syncCount = Mutex(0)

    /// Changes the faults for the calls that follow.
    func inject(_ change: (inout Faults) -> Void) { faults.withLock { change(&$0) } }

    /// The fsyncs that succeeded.
    var syncs: Int { syncCount.withLock { $0 } }

    func openForAppending(_ name: String, in folder: Folder) throws(KVStoreError) -> any JournalFile {
        FaultyFile(try DiskJournalFiles().openForAppending(name, in: folder), disk: self)
    }

    fileprivate var current: Faults { faults.withLock { $0 } }

    /// What the next append does: one of ``Faults/nextAppends``, which it takes, or ``Faults/append``.
    fileprivate func nextAppend() -> (bytes: Int, errno: Errno)? {
        faults.withLock { faults in
            faults.nextAppends.isEmpty ? faults.append.map { (0, $0) } : faults.nextAppends.removeFirst()
        }
    }

    fileprivate func synced() { syncCount.withLock { $0 += 1 } }
}

/// A segment that fails as its disk's faults say, and otherwise writes through to the real one.
private final class FaultyFile: JournalFile {
    let file: any JournalFile
    let disk: FaultyJournalFiles

    init(_ file: any JournalFile, disk: FaultyJournalFiles) {
        self.file = file
        self.disk = disk
    }

    func append(_ bytes: [UInt8]) throws(SystemCallError) {
        if let (written, errno) = disk.nextAppend() {
            try file.append(Array(bytes.prefix(written)))
            throw SystemCallError("write", errno: errno)
        }
        try file.append(bytes)
    }

    func truncate(to size: Int) throws(SystemCallError) {
        if let errno = disk.current.truncate { throw SystemCallError("ftruncate", errno: errno) }
        try file.truncate(to: size)
    }

    func sync() throws(SystemCallError) {
        disk.current.beforeSync?()
        if let errno = disk.current.sync { throw SystemCallError("fsync", errno: errno) }
        try file.sync()
        disk.synced()
    }

    func size() throws(SystemCallError) -> Int { try file.size() }
}

/// A sync directory whose device "a" writes through ``FaultyJournalFiles``.
struct FaultFixture {
    let root = TemporaryFolder("kvfs-faults")
    let disk = FaultyJournalFiles()
    let warnings = Warnings()

    /// Device `name`'s store, writing through the faulty disk, or `onDisk` straight to the real one.
    func open(_ name: String = "a", onDisk: Bool = false) throws -> DeviceStore {
        try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-" + name), deviceName: name,
                        clock: HybridLogicalClock(), warn: warnings.add,
                        journalFiles: onDisk ? DiskJournalFiles() : disk)
    }

    /// Device "a"'s values as a store that opens its folder from the disk finds them.
    func valuesOnDisk() throws -> [StoreKey: PropertyListValue] {
        let store = try open(onDisk: true)
        defer { store.close() }
        return store.values
    }

    /// The path of `store`'s segment `generation`.
    func segmentPath(of store: DeviceStore, _ generation: UInt64) -> String {
        store.syncDirectory.path + "/devices/" + store.deviceID.hex + "/" + DeviceFolder.segmentName(generation)
    }

    /// For each of `store`'s segments, whether it ends in part of a record.
    func journalTails(of store: DeviceStore) throws -> [Bool] {
        let folder = store.syncDirectory.path + "/devices/" + store.deviceID.hex
        return try Files.list(folder).filter { $0.hasPrefix("journal-") }.sorted().map { name in
            let bytes = try #require(try Files.read(folder + "/" + name))
            return bytes.withUnsafeBytes { RecordFrame.scan($0).stoppedEarly }
        }
    }

    func cleanup() { root.cleanup() }
}
