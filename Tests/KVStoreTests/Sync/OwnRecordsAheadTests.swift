import Foundation
import Testing
@testable import KVStore

/// Issue 18 item 3 (docs/sync.md § Stamps from the future): a record in this
/// device's own folder stamped more than the maximum offset ahead of its
/// clock — written while the clock was wrong, or by a program writing into
/// the folder — must not silence the device: it is rewritten stamped now, and
/// the clock never follows it.
@Suite("This device's own records stamped far ahead")
struct OwnRecordsAheadTests {
    let fixture = SyncFixture()
    let year: UInt64 = 365 * 86_400_000

    /// Every stamp in the files of `store`'s folder (records and snapshots' ends).
    private func stampsInFolder(of store: DeviceStore) throws -> [HLCTimestamp] {
        let folder = fixture.folder(of: store)
        return try Files.list(folder).filter { $0.hasSuffix(".log") || $0.hasSuffix(".snap") }.flatMap { name in
            let bytes = try #require(try Files.read(folder + "/" + name))
            return bytes.withUnsafeBytes { RecordFrame.scan($0) }.records.map(\.stamp.time)
        }
    }

    @Test("a write made while the clock read 75 years ahead: the next start rewrites it stamped now; later writes reach the other device and win over it, in 75 years too")
    func aWriteUnderAWrongClockIsRewritten() throws {
        defer { fixture.cleanup() }
        let time = SimulatedTime()
        let ahead = 75 * year
        var a = try fixture.open("a", clock: HybridLogicalClock { time.now })
        try a.set(.integer(1), forKey: "a")
        a.close()
        a = try fixture.open("a", clock: HybridLogicalClock { time.now + ahead })  // faketime '2101-…'
        try a.set(.integer(2), forKey: "b")
        a.close()

        a = try fixture.open("a", clock: HybridLogicalClock { time.now })
        try a.set(.integer(3), forKey: "c")
        let stamp = try #require(a.entry(forKey: "c")).stamp.time
        #expect(stamp.milliseconds == time.now, "the clock did not follow the record stamped ahead")
        #expect(try #require(a.entry(forKey: "b")).stamp.time < stamp, "b was rewritten stamped before c")
        #expect(try stampsInFolder(of: a).allSatisfy { $0.milliseconds <= time.now }, "no stamp ahead is left in the folder")
        #expect(fixture.warnings.contain("rewrote 1 of them"))
        let warning = try #require(a.status().warnings.first { $0.kind == .ownRecordsAhead })
        #expect(warning.message.contains("rewrote 1 of them") && warning.fix.contains("clock"))

        let other = try fixture.open("other", clock: HybridLogicalClock { time.now })
        defer { other.close() }
        #expect(other.values == ["a": .integer(1), "b": .integer(2), "c": .integer(3)], "no write of a is held back")
        try a.set(.integer(4), forKey: "b")
        other.refresh()
        #expect(other.value(forKey: "b") == .integer(4), "a later write wins over the rewritten one")
        a.close()

        time.advance(by: ahead + 86_400_000)
        let later = try fixture.open("later", clock: HybridLogicalClock { time.now })
        defer { later.close() }
        #expect(later.values == ["a": .integer(1), "b": .integer(4), "c": .integer(3)], "and still once the old stamp's time has come")
    }

    @Test("a record stamped at the reader's limit, planted in this device's folder: every later write works, and reaches the other device")
    func aRecordAtTheReadersLimitCostsNoWrite() throws {
        defer { fixture.cleanup() }
        var a = try fixture.open("a")
        try a.set(.integer(1), forKey: "k")
        a.close()
        let planted = JournalRecord(stamp: Stamp(time: .latest, device: a.deviceID), operation: .put(key: "planted", value: .string("9999")))
        try append(frames([planted]), to: fixture.folder(of: a) + "/" + DeviceFolder.segmentName(1))

        a = try fixture.open("a")
        try a.set(.integer(2), forKey: "k")
        try a.set(.integer(3), forKey: "j")
        a.close()
        a = try fixture.open("a")
        try a.set(.integer(4), forKey: "after a restart")
        let other = try fixture.open("other")
        defer { other.close() }
        #expect(other.values == ["k": .integer(2), "j": .integer(3), "planted": .string("9999"), "after a restart": .integer(4)])
        a.close()
    }

    @Test("opened read-only, the records ahead are not shown, nothing is written, and the status says how to recover")
    func readOnlySaysHowToRecover() throws {
        defer { fixture.cleanup() }
        var a = try fixture.open("a")
        try a.set(.integer(1), forKey: "k")
        a.close()
        a = try fixture.open("a", clock: HybridLogicalClock { HybridLogicalClock.systemMilliseconds() + 3 * 86_400_000 })
        try a.set(.integer(2), forKey: "ahead")
        a.close()
        let before = try fileTree(fixture.root.path)
        let reader = try DeviceStore(syncDirectory: URL(fileURLWithPath: fixture.root.path + "/sync"),
                                     stateDirectory: URL(fileURLWithPath: fixture.root.path + "/state-a"), readOnly: true, warn: { _ in })
        let warning = try #require(reader.status().warnings.first { $0.kind == .ownRecordsAhead })
        reader.close()
        #expect(reader.values == ["k": .integer(1)])
        #expect(warning.message.contains("1 of them is not shown") && warning.fix.contains("kvfs set"), "\(warning)")
        #expect(try fileTree(fixture.root.path) == before)
    }

    @Test("a device that read the records ahead claims, once the rewritten folder reaches it, no more than the rewriting device wrote")
    func readPositionsComeBackAfterTheRewrite() throws {
        defer { fixture.cleanup() }
        var a = try fixture.open("a", clock: HybridLogicalClock { HybridLogicalClock.systemMilliseconds() + 3 * 86_400_000 })
        try a.set(.integer(1), forKey: "ahead")
        a.close()
        let other = try fixture.open("other")
        defer { other.close() }
        other.publishProgress()
        let sync = SyncDirectory(path: fixture.root.path + "/sync")
        let claimed = try #require(sync.progress(of: other.deviceID)?.read[a.deviceID])
        #expect(claimed.milliseconds > HybridLogicalClock.systemMilliseconds() + 86_400_000, "it read past the records held back: \(claimed)")

        a = try fixture.open("a")
        defer { a.close() }
        other.refresh()
        other.publishProgress()
        let latest = try #require(a.journal.folder.latest)
        let read = try #require(sync.progress(of: other.deviceID)?.read[a.deviceID])
        #expect(read <= latest, "\(read) is past a's latest stamp \(latest)")
        #expect(other.value(forKey: "ahead") == .integer(1))
    }

    @Test("a tombstone waits for a device whose read position is past this device's latest stamp")
    func tombstonesWaitForPositionsPastTheLatestStamp() {
        let device = DeviceID.random()
        let now = HLCTimestamp(milliseconds: 1_795_000_000_000, counter: 0)
        let ahead = HLCTimestamp(milliseconds: now.milliseconds + 75 * year, counter: 0)
        let removal = (key: StoreKey("k"), readFrom: now)
        func peer(read: HLCTimestamp) -> TombstoneCollection.Peer {
            TombstoneCollection.Peer(progress: ReadProgress(own: nil, read: [device: read]), readUpTo: nil, newest: [:])
        }
        let later = HLCTimestamp(milliseconds: now.milliseconds + 5, counter: 0)
        #expect(TombstoneCollection.collectable([removal], of: device, latest: later, peers: [peer(read: later)]) == ["k"])
        #expect(TombstoneCollection.collectable([removal], of: device, latest: later, peers: [peer(read: ahead)]).isEmpty)
    }
}
