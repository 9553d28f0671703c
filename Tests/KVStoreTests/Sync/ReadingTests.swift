import Foundation
import Synchronization
import Testing
@testable import KVStore

/// Reading other devices' folders as synchronizers deliver them: in pieces,
/// out of order, late, and while their owners compact.
@Suite("Reading device folders")
struct ReadingTests {
    let device = DeviceID.random()
    var folder: DeviceFolder { DeviceFolder(path: fixture.root.path + "/devices/" + device.hex) }
    let fixture = SyncFixture()

    private func put(_ n: UInt64, _ key: StoreKey = "k") -> JournalRecord { record(device, n, .put(key: key, value: .integer(Int64(n)))) }

    private func reader() -> DeviceFolderReader {
        DeviceFolderReader(device: device, folder: folder, warn: fixture.warnings.add)
    }

    @Test func aTailArrivingByteByByteIsWaitedOutAndNeverMisread() throws {
        let whole = frames([put(1), put(2), put(3)])
        let path = folder.segmentPath(1)
        let reader = reader()
        var seen: [JournalRecord] = []
        for byte in whole {
            try append([byte], to: path)
            seen += reader.readNew().records
        }
        #expect(seen == [put(1), put(2), put(3)])
        #expect(reader.contiguous == put(3).stamp.time)
        fixture.cleanup()
    }

    @Test func aHoleIsReadAgainOnceFilled() throws {
        let first = frames([put(1)]), second = frames([put(2)]), third = frames([put(3)])
        let path = folder.segmentPath(1)
        try append(first + [UInt8](repeating: 0, count: second.count) + third, to: path)  // the middle is still a hole
        let reader = reader()
        #expect(reader.readNew().records == [put(1), put(3)])
        #expect(reader.contiguous == put(1).stamp.time, "nothing past the hole counts as read")
        let fd = open(path, O_WRONLY)
        _ = second.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(first.count)) }
        close(fd)
        #expect(reader.readNew().records == [put(2), put(3)])
        #expect(reader.contiguous == put(3).stamp.time)
        #expect(reader.readNew().records.isEmpty)
        fixture.cleanup()
    }

    @Test func aHalfCopiedSnapshotWaitsAndAnOlderWholeOneServes() throws {
        let snapshot2 = frames([put(1, "a"), record(device, 5, .snapshotEnd(count: 1))])
        let snapshot3 = frames([put(1, "a"), put(6, "b"), record(device, 7, .snapshotEnd(count: 2))])
        try append(snapshot2, to: folder.snapshotPath(2))
        try append(Array(snapshot3.prefix(snapshot3.count - 3)), to: folder.snapshotPath(3))
        try append(frames([put(8, "c")]), to: folder.segmentPath(3))
        let reader = reader()
        let first = reader.readNew()
        #expect(first.replacesAll && first.records == [put(1, "a"), put(8, "c")])
        #expect(reader.contiguous == HLCTimestamp(milliseconds: 5, counter: 0), "segment 3 follows a snapshot not yet read")
        #expect(fixture.warnings.contain("incomplete"))
        try Files.writeAtomically(folder.snapshotPath(3), snapshot3)
        let second = reader.readNew()
        #expect(second.replacesAll && second.records == [put(1, "a"), put(6, "b"), put(8, "c")])
        #expect(reader.contiguous == put(8).stamp.time)
        fixture.cleanup()
    }

    @Test func filesVanishingBetweenListingAndReadingAreMovedPast() throws {
        try append(frames([put(1)]), to: folder.segmentPath(1))
        let reader = reader()
        #expect(reader.readNew().records == [put(1)])
        // The owner compacts: new segment 2 arrives, segment 1 is gone, snapshot 2 not here yet.
        try append(frames([put(2)]), to: folder.segmentPath(1))
        unlink(folder.segmentPath(1))
        try append(frames([put(3)]), to: folder.segmentPath(2))
        #expect(reader.readNew().records == [put(3)])
        try append(frames([put(2), record(device, 2, .snapshotEnd(count: 1))]), to: folder.snapshotPath(2))
        let batch = reader.readNew()
        #expect(batch.replacesAll && batch.records == [put(2), put(3)])
        fixture.cleanup()
    }

    @Test func aDeviceFolderAppearingLaterIsRead() throws {
        let b = try fixture.open("b")
        defer { b.close(); fixture.cleanup() }
        let late = DeviceID.random()
        try append(frames([record(late, 1, .put(key: "late", value: .bool(true)))]),
                   to: fixture.root.path + "/sync/devices/\(late.hex)/" + DeviceFolder.segmentName(1))
        let change = b.refresh()
        #expect(change?.keys == ["late"] && change?.reason == .serverChange)
        #expect(b.value(forKey: "late") == .bool(true))
    }

    @Test func theClockMovesPastEverythingReadAcrossRestarts() throws {
        defer { fixture.cleanup() }
        // As far ahead as a remote stamp may be and still move the clock (farther is held back: HorizonTests).
        let ahead = try fixture.open("ahead", clock: HybridLogicalClock { 1000 + HybridLogicalClock.maximumOffset })
        try ahead.set(.integer(1), forKey: "k")
        ahead.close()
        var slow = try fixture.open("slow", clock: HybridLogicalClock { 1000 })  // a wall clock stuck in 1970
        try slow.set(.integer(2), forKey: "k")
        #expect(slow.value(forKey: "k") == .integer(2), "it read the later write, so it writes after it")
        slow.compact()
        slow.close()
        try FileManager.default.removeItem(atPath: fixture.folder(of: ahead))
        let closing = try #require(DeviceFolderReader(device: slow.deviceID, folder: DeviceFolder(path: fixture.folder(of: slow)),
                                                      warn: { _ in }).readNew().latest)
        slow = try fixture.open("slow", clock: HybridLogicalClock { 1000 })
        try slow.set(.integer(3), forKey: "j")
        #expect(slow.entry(forKey: "j")!.stamp.time > closing, "a restarted clock starts past its own folder, snapshot included")
        slow.close()
    }

    @Test func aRemovedOwnFolderIsWrittenAgain() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        try FileManager.default.removeItem(atPath: fixture.folder(of: a))
        a.refresh()
        #expect(fixture.warnings.contain("vanished"))
        try a.set(.integer(2), forKey: "j")
        let c = try fixture.open("c")
        defer { c.close() }
        #expect(c.values == ["k": .integer(1), "j": .integer(2)])
    }

    @Test func aStoreIDStillArrivingIsWaitedForNotInvented() throws {
        let a = try fixture.open("a", sync: "A")
        try a.set(.integer(1), forKey: "k")
        a.close()
        try copyFolder(fixture.folder(of: a, sync: "A"), to: fixture.folder(of: a, sync: "B"))  // devices/ before store-id
        let b = try fixture.open("b", sync: "B")
        defer { b.close(); fixture.cleanup() }
        #expect(b.storeID == "")
        #expect(!FileManager.default.fileExists(atPath: fixture.root.path + "/B/store-id"))
        try Files.writeAtomically(fixture.root.path + "/B/store-id", try #require(try Files.read(fixture.root.path + "/A/store-id")))
        b.refresh()
        #expect(b.storeID == a.storeID)
        #expect(!String(decoding: b.changeLogContents(), as: UTF8.self).contains("AccountChange"))
    }
}
