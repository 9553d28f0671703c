import Foundation
import Testing
@testable import KVStore

/// Issue 7.1–7.3 from the sync directory: what another device's journal
/// holds is read, or skipped with one warning, in bounded time.
@Suite("Hostile journals from other devices")
struct HostileJournalTests {
    func embedding(_ document: [UInt8], key: String, device: DeviceID) -> [UInt8] {
        framed(versionOnePut(device: device, key: key, tag: 6) { $0.blob(document) })
    }

    @Test func hostilePropertyListsInVersionOneRecordsAreSkipped() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        let other = DeviceID.random()
        let bytes = frames([record(other, 1, .put(key: "before", value: .integer(1)))])
            + embedding(HostileDocumentTests.setDocument, key: "set", device: other)
            + embedding(HostileDocumentTests.expandingDocument, key: "bomb", device: other)
            + frames([record(other, 2, .put(key: "after", value: .integer(2)))])
        try append(bytes, to: fixture.root.path + "/sync/devices/\(other.hex)/" + DeviceFolder.segmentName(1))
        let store = try fixture.open("b")
        defer { store.close() }
        #expect(store.values == ["before": .integer(1), "after": .integer(2)])
        #expect(fixture.warnings.all.filter { $0.contains("corrupt bytes") }.count == 2)
    }

    @Test func aChecksumBombCostsBoundedTimeAndWarnsOnce() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        let other = DeviceID.random()
        let bytes = frames([record(other, 1, .put(key: "before", value: .integer(1)))]) + RecordCodecTests.checksumBomb(size: 1 << 20)
        try append(bytes, to: fixture.root.path + "/sync/devices/\(other.hex)/" + DeviceFolder.segmentName(1))
        let clock = ContinuousClock()
        let start = clock.now
        let store = try fixture.open("b")
        defer { store.close() }
        for _ in 0..<3 { _ = store.refresh() }
        #expect(clock.now - start < .seconds(20))
        #expect(store.values == ["before": .integer(1)])
        #expect(fixture.warnings.all.filter { $0.contains("not whole records") }.count == 1, "\(fixture.warnings.all)")
    }
}
