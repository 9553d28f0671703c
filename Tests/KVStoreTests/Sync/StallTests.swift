import Foundation
import Testing
@testable import KVStore

/// Replication never stalls silently: a stray or out-of-order journal
/// segment is not followed (and recovered from without a remount), and what
/// blocks reading a device's folder shows in the status and the log.
@Suite("Stalls, and what the status says of them")
struct StallTests {
    let fixture = SyncFixture()

    private func stray(_ store: DeviceStore) -> String {
        fixture.folder(of: store) + "/" + DeviceFolder.segmentName(0x99)
    }

    /// Issue 8: a stray `journal-…99.log`, even deleted half a second later,
    /// stopped replication from that device until remount.
    @Test func aStraySegmentIsNotFollowedAndDeletingItChangesNothing() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        b.refresh()
        try append(frames([record(a.deviceID, 1, .put(key: "junk", value: .integer(666)))]), to: stray(a))
        try a.set(.integer(2), forKey: "k")
        b.refresh()
        #expect(b.value(forKey: "k") == .integer(2) && b.value(forKey: "junk") == nil)
        let warning = try #require(b.status().warnings.first { $0.kind == .outOfOrder })
        #expect(warning.file == stray(a) && warning.device == a.deviceID.hex && warning.fix.contains("delete it"))
        unlink(stray(a))
        try a.set(.integer(3), forKey: "k")
        b.refresh()
        #expect(b.value(forKey: "k") == .integer(3))
        #expect(b.status().warnings.isEmpty)
    }

    /// The owner compacts and the old segment's deletion arrives before the
    /// new snapshot: the reader moves on; should the segment it moved to
    /// vanish while the one it left is back, it goes back where it was.
    @Test func aReaderThatMovedOnToASegmentThatVanishesGoesBack() throws {
        let device = DeviceID.random()
        let folder = DeviceFolder(path: fixture.root.path + "/devices/" + device.hex)
        defer { fixture.cleanup() }
        func put(_ n: UInt64) -> JournalRecord { record(device, n, .put(key: "k", value: .integer(Int64(n)))) }
        try append(frames([put(1)]), to: folder.segmentPath(1))
        let reader = DeviceFolderReader(device: device, folder: folder, warn: fixture.warnings.add)
        #expect(reader.readNew().records == [put(1)])
        let saved = try #require(try Files.read(folder.segmentPath(1)))
        unlink(folder.segmentPath(1))  // a synchronizer's hiccup, and a stray later segment
        try append(frames([put(9)]), to: folder.segmentPath(5))
        #expect(reader.readNew().records == [put(9)])
        unlink(folder.segmentPath(5))
        try Files.writeAtomically(folder.segmentPath(1), saved + frames([put(2)]))
        #expect(reader.readNew().records == [put(2)], "back in segment 1, where it was")
        #expect(reader.segmentGeneration == 1 && fixture.warnings.contain("vanished"))
        try append(frames([put(3)]), to: folder.segmentPath(1))
        #expect(reader.readNew().records == [put(3)])
    }

    @Test func whatBlocksReadingAFolderIsAWarningNamingTheFileAndTheFix() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        let snapshot = fixture.folder(of: a) + "/" + DeviceFolder.snapshotName(7)
        try append(Array(frames([record(a.deviceID, 1, .put(key: "k", value: .integer(1)))]).dropLast(2)), to: snapshot)
        b.refresh()
        let warnings = b.status().warnings
        #expect(warnings.contains { $0.kind == .incompleteSnapshot && $0.file == snapshot && $0.fix.contains("synchronizer") })
        let json = b.status().json()
        #expect(try StoreStatus(json: Data(json.utf8)) == b.status() || json.contains("incompleteSnapshot"))
    }

    /// A device that runs but does not read this one's writes (its copy of
    /// this device's folder is stuck), and one that says it wrote more than
    /// its folder here holds, are called out; so is one not heard from.
    @Test func aStuckCopyAndASilentDeviceAreCalledOutAndLogged() throws {
        let a = try fixture.open("a", sync: "A")
        defer { a.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "seen")
        try Files.makeDirectory(fixture.root.path + "/B")  // a replica made by copying, as with cp -r
        try Files.writeAtomically(fixture.root.path + "/B/store-id", try #require(try Files.read(fixture.root.path + "/A/store-id")))
        try copyFolder(fixture.folder(of: a, sync: "A"), to: fixture.folder(of: a, sync: "B"))
        let b = try fixture.open("b", sync: "B")
        defer { b.close() }
        try a.set(.integer(2), forKey: "never-arrives")  // a's folder is not carried to B any more
        a.publishProgress()
        Thread.sleep(forTimeInterval: 1.2)
        b.publishProgress(heartbeat: true)  // b's folder still reaches A
        try copyFolder(fixture.folder(of: b, sync: "B"), to: fixture.folder(of: b, sync: "A"))
        a.refresh()
        let fromA = a.status(staleAfter: 1).warnings
        let stuck = try #require(fromA.first { $0.kind == .notReadingUs }, "\(fromA)")
        #expect(stuck.device == b.deviceID.hex && stuck.file == fixture.folder(of: a, sync: "A") && stuck.fix.contains("-prefer"))
        let fromB = b.status(staleAfter: 1)
        #expect(fromB.devices.first { $0.id == a.deviceID.hex }?.state == .quiet)
        #expect(fromB.warnings.contains { $0.kind == .quiet && $0.device == a.deviceID.hex && $0.fix.contains("kvfs retire") })
        a.health.staleAfter = 1; a.logHealth(force: true)
        #expect(fixture.warnings.contain("has not read this device's writes"), "the daemon log says it too")
    }

    @Test("a hundred silent device folders are said in a bounded number of log lines, not one line each")
    func manyWarningsAtOnceAreSummed() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        let a = try fixture.open("a")
        defer { a.close() }
        for n in 1...100 { mkdir(fixture.root.path + "/sync/devices/" + String(format: "%032x", n), 0o700) }
        a.refresh()
        #expect(a.status(staleAfter: 1).warnings.count { $0.kind == .quiet } == 100, "the status lists every one")
        a.health.staleAfter = 1; a.logHealth(force: true)
        let lines = fixture.warnings.all.filter { $0.contains("has not been heard from") || $0.contains("more warnings like these") }
        #expect(lines.count == HealthMonitor.warningsLoggedAtOnce + 1, "\(lines.count) lines")
        #expect(lines.last?.contains("and 80 more warnings like these") == true, "\(lines.last ?? "")")
    }
}
