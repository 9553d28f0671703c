import Foundation
import Testing
@testable import KVStore

/// docs/sync.md § Stamps from the future: a remote stamp too far in the future is held
/// back with a warning instead of dragging the clock along; the clock never
/// issues a stamp its own reader refuses (issue 7.4).
@Suite("Stamps from the far future")
struct HorizonTests {
    let fixture = SyncFixture()

    @Test("one record from another device stamped 9999-12-31 with the largest counter costs this device none of its later writes")
    func aFarFutureRecordCostsNoLaterWrite() throws {
        defer { fixture.cleanup() }
        let other = DeviceID.random()
        let hostile = JournalRecord(stamp: Stamp(time: .latest, device: other),
                                    operation: .put(key: "k", value: .string("from the year 9999")))
        try append(frames([hostile]), to: fixture.root.path + "/sync/devices/\(other.hex)/" + DeviceFolder.segmentName(1))
        var store = try fixture.open("a")
        try store.set(.string("mine"), forKey: "k")
        try store.set(.integer(1), forKey: "j")
        #expect(store.values == ["k": .string("mine"), "j": .integer(1)], "acknowledged writes show")
        let stamp = try #require(store.entry(forKey: "k")).stamp.time
        #expect(stamp.milliseconds <= HybridLogicalClock.systemMilliseconds(), "the clock stayed with the wall clock")
        #expect(fixture.warnings.contain("held back"))
        store.close()
        store = try fixture.open("a")
        defer { store.close() }
        #expect(store.values == ["k": .string("mine"), "j": .integer(1)], "and they survive a restart")
    }

    @Test("held back, not lost: two devices whose clocks are two days apart show one store once the slower clock is within the maximum offset")
    func heldBackRecordsArriveOnceTheClockCatchesUp() throws {
        defer { fixture.cleanup() }
        let time = SimulatedTime()
        let twoDays: UInt64 = 2 * 86_400_000
        let a = try fixture.open("a", clock: HybridLogicalClock { time.now })
        let b = try fixture.open("b", clock: HybridLogicalClock { time.now + twoDays })
        defer { a.close(); b.close() }
        try b.set(.string("b"), forKey: "k")
        try b.set(.string("b"), forKey: "j")
        let firstOfB = try #require(b.entry(forKey: "k")).stamp.time

        a.refresh()
        #expect(a.values.isEmpty, "B's records wait")
        #expect(fixture.warnings.contain("held back"))
        try a.set(.string("a"), forKey: "k")
        try a.set(.string("a"), forKey: "only-a")
        #expect(try #require(a.entry(forKey: "k")).stamp.time.milliseconds == time.now, "A's clock was not dragged two days ahead")
        a.publishProgress()
        let read = SyncDirectory(path: fixture.root.path + "/sync").progress(of: a.deviceID)?.read[b.deviceID]
        #expect(read.map { $0 < firstOfB } ?? true, "A does not claim to have read what it holds back")

        b.refresh()
        #expect(b.values == ["k": .string("b"), "j": .string("b"), "only-a": .string("a")], "B's write of k is the later one")
        b.compact()  // B's records now come in a snapshot that replaces its journal
        a.refresh()
        #expect(a.values == ["k": .string("a"), "only-a": .string("a")], "still held back after B compacted")

        time.advance(by: twoDays - HybridLogicalClock.maximumOffset + 60_000)
        a.refresh()
        #expect(a.values == b.values, "the same store on both once A's clock is within the maximum offset")
        let c = try fixture.open("c", clock: HybridLogicalClock { time.now })
        defer { c.close() }
        #expect(c.values == a.values, "and on a device that reads everything afresh")
    }

    @Test("a wall clock past the year 9999 refuses writes with a clear error; every write acknowledged survives a restart")
    func aClockPastTheYear9999RefusesWrites() throws {
        defer { fixture.cleanup() }
        var store = try fixture.open("a")
        try store.set(.integer(1), forKey: "before")
        store.close()
        store = try fixture.open("a", clock: HybridLogicalClock { HLCTimestamp.latest.milliseconds + 1_000 })
        let refusal = #expect(throws: KVStoreError.self, "a record stamped past the year 9999 would be refused by every reader") {
            try store.set(.integer(2), forKey: "after")
        }
        #expect(refusal.map { "\($0)".contains("year 9999") && "\($0)".contains("set the system clock") } == true,
                "\(refusal.map { "\($0)" } ?? "no error")")
        store.close()
        store = try fixture.open("a")
        defer { store.close() }
        #expect(store.values == ["before": .integer(1)])
    }
}

extension HorizonTests {
    @Test("retired, a device's records held back for their stamps two days ahead are kept to merge later; revoked, they are dropped and said so, and never merge")
    func aRevokedDeviceLeavesNothingToMergeLater() throws {
        defer { fixture.cleanup() }
        for revoking in [false, true] {
            let time = SimulatedTime()
            let twoDays: UInt64 = 2 * 86_400_000
            let sync = "sync-\(revoking)"
            let a = try fixture.open("a-\(revoking)", sync: sync, clock: HybridLogicalClock { time.now })
            let b = try fixture.open("b-\(revoking)", sync: sync, clock: HybridLogicalClock { time.now + twoDays })
            defer { a.close() }
            try b.set(.string("from the future"), forKey: "k")
            b.close()
            a.refresh()
            #expect(a.values.isEmpty, "b's record waits")
            let retired = try a.retire(b.deviceID, force: true, revoking: revoking)
            #expect(retired.dropped == (revoking ? 1 : 0))
            #expect(retired.description.contains("stamped far ahead") == revoking, "\(retired)")
            time.advance(by: twoDays)
            a.refresh()
            #expect(a.values == (revoking ? [:] : ["k": .string("from the future")]))
        }
        #expect(fixture.warnings.contain("is revoked: its 1 records stamped far ahead are dropped"))
    }
}
