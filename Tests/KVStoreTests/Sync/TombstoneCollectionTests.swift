import Foundation
import Testing
@testable import KVStore

/// Compaction across devices: each clause of the tombstone rule
/// (``TombstoneCollection``) holds a tombstone back, and every store
/// converges whatever was collected. History is off here: with it, the
/// retention keeps removals and beaten values for their days (HistoryTests).
@Suite("Tombstone collection")
struct TombstoneCollectionTests {
    let fixture = SyncFixture(retention: .off)

    /// What `store`'s own folder holds for `key` now (read as a fresh reader would).
    private func ownRecords(_ store: DeviceStore, sync: String = "sync") -> [JournalRecord] {
        DeviceFolderReader(device: store.deviceID, folder: store.sync.folder(of: store.deviceID),
                           warn: { _ in }).readNew().records
    }

    private func holdsTombstone(_ store: DeviceStore, _ key: StoreKey, sync: String = "sync") -> Bool {
        ownRecords(store, sync: sync).contains { $0.operation == .remove(key: key) }
    }

    private func compact(_ stores: DeviceStore...) { for store in stores { store.compact() } }
    private func publish(_ stores: DeviceStore...) { for store in stores { store.publishProgress() } }

    /// `a` removes `k`; `b` reads the removal and says so; `a` reads that and compacts.
    private func removeAndCompact(_ a: DeviceStore, after b: DeviceStore) throws {
        try a.removeValue(forKey: "k")
        b.refresh(after: a)
        publish(b)
        a.refresh()
        compact(a)
    }

    @Test func aTombstoneGoesOnceEveryDeviceHasReadIt() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        try a.removeValue(forKey: "k")
        compact(a)
        #expect(holdsTombstone(a, "k"), "b has not read the removal")
        b.refresh()
        compact(a)
        #expect(holdsTombstone(a, "k"), "b has not said so yet")
        publish(b)
        a.refresh()
        compact(a)
        #expect(!holdsTombstone(a, "k"))
        let c = try fixture.open("c")
        defer { c.close() }
        #expect(c.values.isEmpty && b.values.isEmpty && a.values.isEmpty)
    }

    @Test func aDeviceWithoutProgressHoldsTombstonesBack() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        try a.removeValue(forKey: "k")
        b.refresh(after: a)
        publish(b)
        unlink(fixture.folder(of: b) + "/" + ReadProgress.fileName)
        try Files.writeAtomically(fixture.folder(of: b) + "/.progress.json.tmp", Array("junk".utf8))
        a.refresh()
        compact(a)
        #expect(holdsTombstone(a, "k"))
    }

    @Test func ownRecordsBeatenByAnotherDeviceAreDropped() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        b.refresh(after: a)
        try b.set(.integer(2), forKey: "k")
        a.refresh(after: b)
        compact(a)
        #expect(ownRecords(a).isEmpty)
        let c = try fixture.open("c")
        defer { c.close() }
        #expect(c.values == ["k": .integer(2)])
    }

    /// Clause 3: b still holds an older value for the key in its files.
    @Test func anOlderValueStillInAFolderHoldsTheTombstoneBack() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try b.set(.integer(1), forKey: "k")
        a.refresh(after: b)
        try removeAndCompact(a, after: b)
        #expect(holdsTombstone(a, "k"), "b's journal still holds k = 1")
        compact(b)  // b's k = 1 is beaten by a's removal: gone from b's files
        a.refresh()
        compact(a)
        #expect(!holdsTombstone(a, "k"))
        for store in [a, b] { #expect(store.values.isEmpty) }
        let c = try fixture.open("c")
        defer { c.close() }
        #expect(c.values.isEmpty)
    }

    /// Clause 2: b's progress arrived before the journal that holds b's older value.
    @Test func progressAheadOfTheRecordsReadHoldsTheTombstoneBack() throws {
        let a = try fixture.open("a", sync: "A", clock: HybridLogicalClock { HybridLogicalClock.systemMilliseconds() + 3_600_000 })
        defer { fixture.cleanup() }
        try Files.makeDirectory(fixture.root.path + "/B")
        try Files.writeAtomically(fixture.root.path + "/B/store-id", try #require(try Files.read(fixture.root.path + "/A/store-id")))
        let b = try fixture.open("b", sync: "B")
        defer { a.close(); b.close() }
        try b.set(.integer(1), forKey: "k")  // older than a's removal below
        try a.set(.integer(0), forKey: "k")
        try a.removeValue(forKey: "k")
        a.reachSyncPoint()  // its records copied as a synchronizer would, once their mark is there
        try copyFolder(fixture.folder(of: a, sync: "A"), to: fixture.folder(of: a, sync: "B"))
        b.refresh()
        publish(b)
        let bInA = fixture.folder(of: b, sync: "A")
        try Files.makeDirectory(bInA)
        try Files.writeAtomically(bInA + "/" + ReadProgress.fileName, try #require(try Files.read(fixture.folder(of: b, sync: "B") + "/" + ReadProgress.fileName)))
        a.refresh()
        compact(a)
        #expect(holdsTombstone(a, "k", sync: "A"), "b wrote k = 1 before it read the removal, and a has not read that yet")
        b.reachSyncPoint()
        try copyFolder(fixture.folder(of: b, sync: "B"), to: bInA)
        try copyFolder(fixture.folder(of: a, sync: "A"), to: fixture.folder(of: a, sync: "B"))
        a.refresh()
        b.refresh()
        #expect(a.values.isEmpty && b.values.isEmpty)
    }

    @Test func aDeviceBackFromALongAbsenceConverges() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        var away = try fixture.open("away")
        defer { a.close(); b.close(); fixture.cleanup() }
        try away.set(.integer(1), forKey: "k")
        away.close()  // away for long, holding k = 1 in its folder
        a.refresh()
        try removeAndCompact(a, after: b)
        #expect(holdsTombstone(a, "k"), "the device away has not read the removal")
        away = try fixture.open("away")
        defer { away.close() }
        #expect(away.values.isEmpty)
        compact(away)
        publish(away)
        a.refresh()
        compact(a)
        #expect(!holdsTombstone(a, "k"))
        for store in [a, b, away] {
            store.refresh()
            #expect(store.values.isEmpty)
        }
    }

    /// The one case the rule cannot cover: a device whose folder nobody knew
    /// when the tombstone went brings an older value back — on every device alike.
    @Test func aDeviceUnknownWhenTheTombstoneWentStillConverges() throws {
        let a = try fixture.open("a", sync: "A", clock: HybridLogicalClock { HybridLogicalClock.systemMilliseconds() + 3_600_000 })
        try Files.makeDirectory(fixture.root.path + "/C")
        try Files.writeAtomically(fixture.root.path + "/C/store-id", try #require(try Files.read(fixture.root.path + "/A/store-id")))
        let c = try fixture.open("c", sync: "C")
        defer { a.close(); c.close(); fixture.cleanup() }
        try c.set(.integer(1), forKey: "k")  // older than a's removal
        try a.set(.integer(2), forKey: "k")
        try a.removeValue(forKey: "k")
        compact(a)
        #expect(!holdsTombstone(a, "k", sync: "A"), "no other device is known")
        c.reachSyncPoint()
        try copyFolder(fixture.folder(of: c, sync: "C"), to: fixture.folder(of: c, sync: "A"))
        try copyFolder(fixture.folder(of: a, sync: "A"), to: fixture.folder(of: a, sync: "C"))
        a.refresh()
        c.refresh()
        #expect(a.values == ["k": .integer(1)])
        #expect(c.values == a.values)
        let late = try fixture.open("late", sync: "A")
        defer { late.close() }
        #expect(late.values == a.values)
    }
}
