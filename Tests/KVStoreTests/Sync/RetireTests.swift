import Foundation
import Testing
@testable import KVStore

/// docs/sync.md § Retirement and adoption: retiring a device keeps every value and removal
/// it won; a device folder that merely vanishes never costs data (``Adoption``).
@Suite("Retiring devices, and folders that vanish")
struct RetireTests {
    let fixture = SyncFixture()

    /// Issue 8.1's three devices: m1 writes `k0 = m1-old` and `d0`; m3 then
    /// writes `k0 = m3-new` and `r0` and removes `d0`; m2 reads along; m1
    /// compacts (its `k0` is beaten: gone from its folder); m3 closes.
    private func threeDevices() throws -> (m1: DeviceStore, m2: DeviceStore, m3: DeviceID) {
        let m1 = try fixture.open("m1"), m2 = try fixture.open("m2"), m3 = try fixture.open("m3")
        try m1.set(.string("m1-old"), forKey: "k0")
        try m1.set(.string("doomed"), forKey: "d0")
        m3.refresh(after: m1)
        try m3.set(.string("m3-new"), forKey: "k0")
        try m3.set(.string("only m3"), forKey: "r0")
        try m3.removeValue(forKey: "d0")
        m3.close()
        for store in [m1, m2] { store.refresh(after: m1) }
        m1.compact()
        #expect(m1.values == expected && m2.values == expected)
        return (m1, m2, m3.deviceID)
    }

    private let expected: [StoreKey: PropertyListValue] = ["k0": .string("m3-new"), "r0": .string("only m3")]

    /// The store as a device that reads the folders afresh sees it.
    private func freshValues() throws -> [StoreKey: PropertyListValue] {
        let fresh = try fixture.open("fresh-\(UUID().uuidString.prefix(6))")
        defer { fresh.close() }
        return fresh.values
    }

    @Test func aFolderRemovedByHandLosesNothingOnTheDevicesThatRun() throws {
        let (m1, m2, m3) = try threeDevices()
        defer { m1.close(); m2.close(); fixture.cleanup() }
        try FileManager.default.removeItem(atPath: fixture.root.path + "/sync/devices/" + m3.hex)
        for store in [m1, m2] {
            store.refresh()
            #expect(store.values == expected)
        }
        #expect(fixture.warnings.contain("vanished"))
        #expect(try freshValues() == expected)
        m1.close()
        #expect(try fixture.open("m1").values == expected, "after a restart, from the files alone")
    }

    @Test func retiringKeepsWhatTheDeviceWonOnEveryDeviceAndRemovesItsFolder() throws {
        let (m1, m2, m3) = try threeDevices()
        defer { m1.close(); m2.close(); fixture.cleanup() }
        let retired = try m1.retire(m1.device(matching: "m3"))
        #expect(retired.id == m3 && retired.values == 2 && retired.removals == 1 && retired.folderLeft == nil, "\(retired)")
        #expect(!FileManager.default.fileExists(atPath: fixture.root.path + "/sync/devices/" + m3.hex))
        #expect(FileManager.default.fileExists(atPath: fixture.folder(of: m1) + "/adopted.json"))
        m2.refresh(after: m1)
        for store in [m1, m2] { #expect(store.values == expected) }
        #expect(!fixture.warnings.contain("vanished"), "a retired device's folder going is no news")
        #expect(try freshValues() == expected)
    }

    @Test func aRetiredMachineMountedAgainJoinsAsANewDevice() throws {
        let (m1, m2, m3) = try threeDevices()
        defer { m1.close(); m2.close(); fixture.cleanup() }
        _ = try m1.retire(m3)
        let back = try fixture.open("m3")
        defer { back.close() }
        #expect(back.deviceID != m3)
        #expect(fixture.warnings.contain("was retired by m1 (kvfs retire)") && fixture.warnings.contain("joins the store again as a new device"))
        #expect(back.values == expected)
        try back.set(.string("from the machine that came back"), forKey: "n")
        #expect(!FileManager.default.fileExists(atPath: fixture.root.path + "/sync/devices/" + m3.hex), "nothing written as the retired device")
        m1.refresh(after: back)
        #expect(m1.value(forKey: "n") == .string("from the machine that came back"), "its writes reach the others")
    }

    @Test func retiringIsRefusedForThisDeviceAnUnknownOneALiveOneAndAHalfArrivedOne() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try b.set(.integer(1), forKey: "k")
        a.refresh(after: b)
        #expect(throws: KVStoreError.self) { try a.retire(a.deviceID) }
        #expect(throws: KVStoreError.self) { try a.retire(DeviceID.random()) }
        #expect(throws: KVStoreError.self) { try a.device(matching: "nobody") }
        do {
            _ = try a.retire(b.deviceID)
            Issue.record("b is open and wrote a moment ago")
        } catch {
            #expect(error.description.contains("looks alive"), "\(error)")
        }
        try b.set(.integer(2), forKey: "j")
        b.close()
        let segment = fixture.folder(of: b) + "/" + DeviceFolder.segmentName(1)  // its last record has not arrived here
        let bytes = try #require(try Files.read(segment))
        try Files.writeAtomically(segment, Array(bytes.dropLast(3)))
        do {
            _ = try a.retire(b.deviceID)
            Issue.record("b's folder has not fully arrived")
        } catch {
            #expect(error.description.contains("not fully arrived"), "\(error)")
        }
        #expect(try a.retire(b.deviceID, force: true).values == 1, "forced: what is here is kept")
        #expect(a.values == ["k": .integer(1)])
    }

    @Test func noTombstoneWaitsForARetiredDevice() throws {
        let a = try fixture.open("a"), b = try fixture.open("b"), gone = try fixture.open("gone")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.setRetention(.off)  // no history: the tombstone goes as soon as the rule lets it
        gone.close()  // away for good: it never reads what follows
        try a.set(.integer(1), forKey: "k")
        try a.removeValue(forKey: "k")
        b.refresh(after: a)
        b.publishProgress()
        a.refresh()
        a.compact()
        #expect(holdsTombstone(a, "k"), "the device away holds it back")
        _ = try b.retire(gone.deviceID)
        a.refresh(after: b)
        a.compact()
        #expect(!holdsTombstone(a, "k"))
    }

    /// A tombstone that beat a retired device's value can go; should the
    /// retired folder come back (a stale copy restored), its value stays beaten.
    @Test func aRetiredFolderThatComesBackBringsNothingBack() throws {
        let a = try fixture.open("a"), b = try fixture.open("b"), old = try fixture.open("old")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.setRetention(.off)  // no history: the tombstone goes as soon as the rule lets it
        try old.set(.integer(1), forKey: "k")
        old.close()
        let backup = fixture.root.path + "/backup"
        try copyFolder(fixture.folder(of: old), to: backup)
        a.refresh()
        try a.removeValue(forKey: "k")
        _ = try a.retire(old.deviceID)
        b.refresh(after: a)
        b.publishProgress()
        a.refresh()
        a.compact()
        #expect(!holdsTombstone(a, "k"))
        try copyFolder(backup, to: fixture.folder(of: old))
        for store in [a, b] {
            store.refresh()
            #expect(store.values.isEmpty)
        }
        #expect(try freshValues().isEmpty)
    }

    /// The device that kept a retired device's records vanishes in turn: the
    /// devices that run keep both, and pass the adoption on.
    @Test func anAdopterThatVanishesHandsOnWhatItKept() throws {
        let (m1, m2, m3) = try threeDevices()
        defer { m2.close(); fixture.cleanup() }
        _ = try m1.retire(m3)
        try m1.set(.string("m1's own"), forKey: "m1")
        m1.close()
        m2.refresh()
        try FileManager.default.removeItem(atPath: fixture.folder(of: m1))
        m2.refresh()
        var all = expected
        all["m1"] = .string("m1's own")
        #expect(m2.values == all)
        let adopted = m2.engine.withLock { [m2] state in state.folders.adoptions[m2.deviceID]?.keys.sorted() }
        #expect(adopted == [m1.deviceID, m3].sorted())
        #expect(try freshValues() == all)
    }

    /// What a device's own folder holds now, read as a fresh reader would.
    private func holdsTombstone(_ store: DeviceStore, _ key: StoreKey) -> Bool {
        DeviceFolderReader(device: store.deviceID, folder: store.sync.folder(of: store.deviceID), warn: { _ in })
            .readNew().records.contains { $0.operation == .remove(key: key) }
    }
}
