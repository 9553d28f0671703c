import Foundation
import Testing
@testable import KVStore

/// Writes on several devices that together pass a limit: every device ends
/// with the same store by the oldest-first rule (``QuotaRule``), and says so.
@Suite("Quota under concurrency")
struct QuotaConcurrencyTests {
    let fixture = SyncFixture()
    let big = PropertyListValue.data(Data(repeating: 1, count: 600_000))

    private func log(_ store: DeviceStore) -> String { String(decoding: store.changeLogContents(), as: UTF8.self) }

    @Test func theNewerOfTwoWritesThatDoNotFitTogetherIsSetAsideEverywhere() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(big, forKey: "first")   // neither has seen the other's write
        try b.set(big, forKey: "second")
        a.refresh()
        b.refresh()
        for store in [a, b] {
            #expect(Set(store.values.keys) == ["first"])
            #expect(store.status().setAside == ["second"])
            #expect(log(store).contains("\"reason\":\"QuotaViolationChange\",\"code\":2,\"keys\":[\"second\"]"))
        }
        let c = try fixture.open("c")  // a device that was away learns of it when it starts
        defer { c.close() }
        #expect(Set(c.values.keys) == ["first"])
        #expect(log(c).contains("\"reason\":\"QuotaViolationChange\",\"code\":2,\"keys\":[\"second\"]"))
        try a.removeValue(forKey: "first")  // room again: the set-aside value comes back
        b.refresh()
        #expect(Set(a.values.keys) == ["second"] && Set(b.values.keys) == ["second"])
    }

    /// "first" (600 kB) shows, "second" (600 kB) is set aside; "small" is older than both.
    private func overflow(_ a: DeviceStore, _ b: DeviceStore) throws {
        try a.set(.string("old"), forKey: "small")
        b.refresh()
        try a.set(big, forKey: "first")
        try b.set(big, forKey: "second")  // b has not seen "first"
        a.refresh()
        b.refresh()
        #expect(a.status().setAside == ["second"] && b.status().setAside == ["second"])
    }

    /// Issue 8.2: a set-aside key froze every overwrite of an older key.
    @Test func whileAKeyIsSetAsideAnOverwriteThatFitsIsAcceptedEverywhere() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try overflow(a, b)
        let other = PropertyListValue.data(Data(repeating: 9, count: 600_000))
        try a.set(other, forKey: "first")               // the same size: it needs no room it does not take
        try b.set(.string("new"), forKey: "small")      // and on the device that wrote the set-aside key
        try a.set(.integer(5), forKey: "small")         // a type change is an overwrite too
        try a.rename("small", to: "renamed")            // so is a rename into the room it held
        a.refresh()
        b.refresh()
        for store in [a, b] {
            #expect(store.values == ["first": other, "renamed": .integer(5)])
            #expect(store.status().setAside == ["second"])
        }
        let c = try fixture.open("c")  // and a fresh reader of the files agrees
        defer { c.close() }
        #expect(c.values == a.values)
    }

    @Test func aWriteThatWouldItselfPassALimitIsRefused() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try overflow(a, b)
        #expect(throws: KVStoreError.storeFull(key: "first", over: 1)) {  // with "small" (4 bytes), one byte too many
            try a.set(.data(Data(repeating: 3, count: 1_048_573)), forKey: "first")
        }
        #expect(throws: KVStoreError.storeFull(key: "third", over: 600_000 + 4 + 500_000 - 1_048_576)) {
            try a.set(.data(Data(repeating: 3, count: 500_000)), forKey: "third")
        }
        #expect(a.value(forKey: "first") == big && a.value(forKey: "third") == nil)
        try a.set(.data(Data(repeating: 3, count: 400_000)), forKey: "third")  // fits after everything: shows
        b.refresh()
        #expect(Set(a.values.keys) == ["small", "first", "third"] && a.values == b.values)
        #expect(a.status().setAside == ["second"])
    }

    /// The rule's one surprise, the same on every device: room made before a
    /// set-aside value lets it back in its place, and a later value that no
    /// longer fits is set aside in its turn (and logged).
    @Test func aSetAsideValueComesBackInItsPlaceWhenRoomAppearsBeforeIt() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try overflow(a, b)
        try a.set(.data(Data(repeating: 3, count: 300_000)), forKey: "third")
        try a.set(.data(Data(repeating: 3, count: 400_000)), forKey: "first")  // shrinks: "second" fits before "third"
        b.refresh()
        for store in [a, b] {
            #expect(Set(store.values.keys) == ["small", "first", "second"])
            #expect(store.status().setAside == ["third"])
            #expect(log(store).contains("\"reason\":\"QuotaViolationChange\",\"code\":2,\"keys\":[\"third\"]"))
        }
    }

    @Test func aRankRoundTripsAndARankThatCannotBeIsJunk() {
        let device = DeviceID.random()
        let earlier = Stamp(time: HLCTimestamp(milliseconds: 5, counter: 0), device: device)
        func decoded(_ record: JournalRecord) -> JournalRecord? {
            RecordCodec.encode(record).withUnsafeBytes { RecordCodec.decode($0) }
        }
        let put = JournalRecord(stamp: record(device, 9, .remove(key: "k")).stamp, operation: .put(key: "k", value: .integer(1)), rank: earlier)
        #expect(decoded(put) == put)
        var later = put
        later.rank = Stamp(time: HLCTimestamp(milliseconds: 10, counter: 0), device: device)
        #expect(decoded(later) == nil, "a value never ranks after its own stamp")
        var removal = put
        removal.operation = .remove(key: "k")
        #expect(decoded(removal) == nil, "a removal has no place in the quota rule's order")
    }
}
