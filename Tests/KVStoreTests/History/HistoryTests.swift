import Foundation
import Synchronization
import Testing
@testable import KVStore

/// A wall clock a test moves by hand.
final class TestWallClock: Sendable {
    private let now = Mutex<UInt64>(1_800_000_000_000)  // 2027-01-15

    static let day: UInt64 = 86_400_000

    func advance(days: Double) { now.withLock { $0 = UInt64(Int64($0) + Int64(days * Double(Self.day))) } }

    /// A hybrid logical clock that reads this wall clock.
    var clock: HybridLogicalClock { HybridLogicalClock { self.now.withLock { $0 } } }
}

/// docs/history.md: every version of every key within the retention,
/// identical on every device, kept across compaction and retirement.
@Suite("History")
struct HistoryTests {
    let fixture = SyncFixture()

    /// What a key's history says, in a form two devices' histories compare by.
    private func summary(_ store: DeviceStore, _ key: StoreKey) -> [String] {
        store.history(forKey: key).map { "\($0.name)\($0.isCurrent ? " current" : "")" }
    }

    private func values(_ store: DeviceStore, _ key: StoreKey) throws -> [PropertyListValue?] {
        try store.history(forKey: key).map { try store.value(of: $0) }
    }

    /// The keys and stamps of the records `store`'s own folder holds, read afresh.
    private func ownRecords(_ store: DeviceStore) -> [String] {
        DeviceFolderReader(device: store.deviceID, folder: store.sync.folder(of: store.deviceID), warn: { _ in })
            .readNew().records.flatMap { record in record.changes.map { "\($0.key)=\($0.value.map { "\($0)" } ?? "removed")" } }
    }

    @Test("a key's versions, oldest first: values and removals, the current one marked, each named by time and device")
    func versionsOldestFirst() throws {
        let a = try fixture.open("laptop")
        defer { a.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        try a.set(.integer(2), forKey: "k")
        try a.removeValue(forKey: "k")
        try a.set(.string("three"), forKey: "k")
        let history = a.history(forKey: "k")
        #expect(history.map(\.isRemoval) == [false, false, true, false])
        #expect(history.map(\.isCurrent) == [false, false, false, true])
        #expect(history.map(\.size) == [2, 2, 0, 6])
        #expect(try values(a, "k") == [.integer(1), .integer(2), nil, .string("three")])
        #expect(history.allSatisfy { $0.deviceName == "laptop" && $0.deviceID == a.deviceID && $0.key == "k" })
        #expect(history[2].name.hasSuffix("@laptop.removed") || history[2].name.contains("@laptop~"), "\(history[2].name)")
        #expect(Set(history.map(\.name)).count == 4, "names are unique: \(history.map(\.name))")
        #expect(history.map(\.stamp) == history.map(\.stamp).sorted())
        #expect(a.historyKeys == ["k"])
    }

    @Test("a name is the UTC time to the millisecond and the device name; clashes get ~2, ~3 in stamp order; a removal ends in .removed")
    func names() {
        let time = HLCTimestamp(milliseconds: 1_795_691_143_123, counter: 0)
        #expect(VersionName.timeText(time) == "2026-11-26T11:05:43.123Z")
        #expect(VersionName.timeText(HLCTimestamp(milliseconds: 0, counter: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(VersionName.timeText(HLCTimestamp(milliseconds: 951_782_400_000, counter: 0)) == "2000-02-29T00:00:00.000Z")
        let later = HLCTimestamp(milliseconds: 1_795_691_143_123, counter: 1)
        let names = VersionName.names(of: [(time, "laptop", false), (later, "laptop", false), (later, "laptop", true),
                                           (later, "desk/top", false), (HLCTimestamp(milliseconds: 1_795_691_143_123, counter: 2), "laptop", false)])
        #expect(names == ["2026-11-26T11:05:43.123Z@laptop", "2026-11-26T11:05:43.123Z@laptop~2", "2026-11-26T11:05:43.123Z@laptop.removed",
                          "2026-11-26T11:05:43.123Z@desk%2Ftop", "2026-11-26T11:05:43.123Z@laptop~3"])
    }

    @Test("history is identical on two devices after writes, removals, concurrent writes, compactions and a retirement")
    func identicalOnEveryDevice() throws {
        let a = try fixture.open("a"), b = try fixture.open("b"), c = try fixture.open("c")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        try b.set(.integer(2), forKey: "k")  // concurrent: neither has read the other
        try c.set(.string("c's"), forKey: "k")
        try c.set(.string("only c"), forKey: "c")
        try c.removeValue(forKey: "c")
        for store in [a, b] { store.refresh(after: a, b, c) }
        try a.removeValue(forKey: "k")
        b.refresh(after: a)
        try b.set(.integer(3), forKey: "k")
        a.refresh(after: b)
        c.refresh(after: a, b)
        let before = summary(a, "k")
        #expect(before.count == 5, "\(before)")
        #expect(summary(b, "k") == before && summary(c, "k") == before)
        a.compact()
        b.compact()
        c.compact()
        for store in [a, b] { store.refresh() }
        #expect(summary(a, "k") == before && summary(b, "k") == before, "compaction keeps what the retention keeps")
        #expect(ownRecords(a).filter { $0.hasPrefix("k=") }.count == 2, "a's snapshot keeps its beaten value and its removal: \(ownRecords(a))")
        let cKey = summary(a, "c")
        #expect(cKey.count == 2 && cKey[1].hasSuffix(".removed current"))
        c.close()
        _ = try a.retire(c.deviceID)
        b.refresh(after: a)
        for store in [a, b] {
            #expect(summary(store, "k") == before, "the retired device's versions are kept")
            #expect(summary(store, "c") == cKey)
        }
        #expect(try values(a, "k") == values(b, "k"))
        let fresh = try fixture.open("fresh")
        defer { fresh.close() }
        #expect(summary(fresh, "k") == before && summary(fresh, "c") == cKey, "from the files alone")
        #expect(try values(fresh, "k") == values(a, "k"))
    }

    @Test("the retention keeps versions for its days: older ones go from listings, and from the snapshot at the next compaction")
    func retentionByAge() throws {
        let wall = TestWallClock()
        let a = try fixture.open("a", clock: wall.clock)
        defer { a.close(); fixture.cleanup() }
        try a.setRetention(HistoryRetention(days: 30, bytes: 1 << 20))
        try a.set(.string("day 0"), forKey: "k")
        wall.advance(days: 10)
        try a.set(.string("day 10"), forKey: "k")
        wall.advance(days: 10)
        try a.set(.string("day 20"), forKey: "k")
        #expect(try values(a, "k") == [.string("day 0"), .string("day 10"), .string("day 20")])
        wall.advance(days: 25)  // day 45: day 0 and day 10 are past 30 days
        #expect(try values(a, "k") == [.string("day 20")], "a current value is never dropped")
        wall.advance(days: -10)  // day 35: day 10 is within 30 days again, day 0 is not
        #expect(try values(a, "k") == [.string("day 10"), .string("day 20")])
        wall.advance(days: 10)
        a.compact()
        #expect(ownRecords(a) == ["k=string(\"day 20\")"], "\(ownRecords(a))")
    }

    @Test("a snapshot of megabytes, written a piece at a time, reads back whole: every value, every version, on this device and another")
    func aLargeSnapshotReadsBackWhole() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        let keys = (0..<400).map { StoreKey("key\($0)") }
        for round in 0..<4 {  // 400 values of 2 KB, then three rounds of older ones: a snapshot of about 3.2 MB
            for key in keys { try a.set(.string("\(round) \(key) " + String(repeating: "v", count: 2000)), forKey: key) }
        }
        a.compact()
        let snapshots = Files.list(fixture.folder(of: a)).filter { $0.hasPrefix("snapshot-") }
        #expect(snapshots.count == 1)
        let size = try #require(try? FileManager.default.attributesOfItem(atPath: fixture.folder(of: a) + "/" + snapshots[0])[.size] as? Int)
        #expect(size > 12 * JournalWriter.snapshotWriteSize, "\(size) bytes: more than a few pieces")
        let expected = (0..<4).map { round in keys.map { PropertyListValue.string("\(round) \($0) " + String(repeating: "v", count: 2000)) } }
        let b = try fixture.open("b")
        defer { b.close() }
        for store in [a, b] {
            for (index, key) in keys.enumerated() {
                #expect(store.entry(forKey: key)?.value == expected[3][index])
                #expect(try values(store, key) == (0..<4).map { expected[$0][index] })
            }
        }
        #expect(ownRecords(a).count == 4 * keys.count)
    }

    @Test("a second compaction copies every older version from the first one's snapshot and the segment after it, read a window at a time, each whole")
    func aSecondCompactionCopiesFromTheFirstsSnapshot() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        let keys = (0..<300).map { StoreKey("key\($0)") }
        func value(_ round: Int, _ key: StoreKey) -> PropertyListValue {  // 1.5 KB: frames cross the windows read
            .string("\(round) \(key) " + String(repeating: "w", count: 1500))
        }
        for round in 0..<3 {
            for key in keys { try a.set(value(round, key), forKey: key) }
            a.compact()  // the copies of the second and third come from the snapshot before and from its segment
        }
        #expect(Files.list(fixture.folder(of: a)).filter { $0.hasPrefix("snapshot-") }.count == 1)
        let b = try fixture.open("b")
        defer { b.close() }
        for store in [a, b] {
            for key in keys { #expect(try values(store, key) == (0..<3).map { value($0, key) }) }
        }
    }

    @Test("the retention keeps the newest versions within its bytes, counted across keys; the oldest go first")
    func retentionBySize() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        let value = String(repeating: "x", count: 99)  // 100 bytes as a file
        try a.setRetention(HistoryRetention(days: 30, bytes: 3 * RetentionRule.charge(key: "k", value: .string(String(repeating: "x", count: 99) + "0"), base: .nothing, rank: nil)))
        for index in 0..<4 { try a.set(.string(value + "\(index)"), forKey: "k") }  // 101 bytes each
        try a.set(.string(value), forKey: "j")
        try a.set(.string(value), forKey: "j")
        // Not current: k0…k2 (101 bytes each) and j's first (100): newest first, j's, k2 fit, k1 does not.
        #expect(a.history(forKey: "k").count == 2, "k2 and the current k3")
        #expect(a.history(forKey: "j").count == 2)
        #expect(try values(a, "k") == [.string(value + "2"), .string(value + "3")])
        try a.setRetention(HistoryRetention(days: 30, bytes: 1))
        #expect(a.history(forKey: "k").count == 1 && a.history(forKey: "j").count == 1, "current values stay whatever the budget")
        a.compact()
        #expect(Set(ownRecords(a)) == ["k=string(\"\(value)3\")", "j=string(\"\(value)\")"])
    }

    @Test("the retention is a store setting every device agrees on: the latest one set, on any device, wins")
    func settingAgreedAcrossDevices() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        #expect(a.retention == .standard && b.retention == .standard)
        try a.setRetention(HistoryRetention(days: 5, bytes: 1000))
        b.refresh(after: a)
        #expect(a.retention == HistoryRetention(days: 5, bytes: 1000) && b.retention == a.retention)
        try b.setRetention(HistoryRetention(days: 7, bytes: 2000))
        a.refresh(after: b)
        #expect(a.retention == HistoryRetention(days: 7, bytes: 2000) && b.retention == a.retention)
        let c = try fixture.open("c")
        defer { c.close() }
        #expect(c.retention == HistoryRetention(days: 7, bytes: 2000))
        #expect(throws: KVStoreError.self) { try a.setRetention(HistoryRetention(days: -1, bytes: 0)) }
        b.close()
        _ = try a.retire(b.deviceID)
        #expect(a.retention == HistoryRetention(days: 7, bytes: 2000), "the setting of a retired device is kept by its adopter")
    }

    @Test("0 turns history off: only current values are listed, and compaction drops the rest")
    func historyOff() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        try a.set(.integer(2), forKey: "k")
        try a.set(.integer(1), forKey: "gone")
        try a.removeValue(forKey: "gone")
        try b.setRetention(.off)
        a.refresh(after: b)
        #expect(a.history(forKey: "k").map(\.isCurrent) == [true])
        #expect(a.history(forKey: "gone").isEmpty && a.historyKeys == ["k"])
        a.compact()
        #expect(ownRecords(a).sorted() == ["gone=removed", "k=integer(2)"], "the tombstone waits for b, as without history")
    }

    @Test("restore and undelete write a new version that reaches another device")
    func restoreAndUndelete() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.string("first"), forKey: "k")
        try a.set(.string("second"), forKey: "k")
        try a.restore(try #require(a.history(forKey: "k").first), forKey: "k")
        b.refresh(after: a)
        #expect(b.value(forKey: "k") == .string("first") && b.history(forKey: "k").count == 3)
        try b.removeValue(forKey: "k")
        a.refresh(after: b)
        #expect(a.value(forKey: "k") == nil)
        let restored = try a.undelete("k")
        #expect(restored.value == nil && restored.stamp == a.history(forKey: "k")[2].stamp)
        b.refresh(after: a)
        #expect(b.value(forKey: "k") == .string("first"))
        #expect(b.history(forKey: "k").last?.deviceName == "a")
        #expect(throws: KVStoreError.noSuchVersion(key: "k", reason: "'k' is not removed (`kvfs restore` brings back any version)")) {
            try a.undelete("k")
        }
        #expect(throws: KVStoreError.self) { try a.undelete("never") }
        let removal = try #require(b.history(forKey: "k").first { $0.isRemoval })
        try a.restore(removal, forKey: "k")
        b.refresh(after: a)
        #expect(b.value(forKey: "k") == nil)
    }

    @Test("a removal stays while the retention keeps it; then it goes, with the older versions of its key")
    func tombstonesWaitForTheRetention() throws {
        let wall = TestWallClock()
        let a = try fixture.open("a", clock: wall.clock), b = try fixture.open("b", clock: wall.clock)
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        try a.removeValue(forKey: "k")
        b.refresh(after: a)
        b.publishProgress()
        a.refresh()
        a.compact()
        #expect(ownRecords(a) == ["k=integer(1)", "k=removed"], "within 30 days: kept, though every device read it")
        wall.advance(days: 31)
        a.compact()
        #expect(ownRecords(a).isEmpty, "\(ownRecords(a))")
        #expect(a.historyKeys.isEmpty && b.historyKeys.isEmpty)
        #expect(a.values.isEmpty && b.values.isEmpty)
    }
}
