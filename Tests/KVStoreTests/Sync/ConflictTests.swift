import Foundation
import Testing
@testable import KVStore

/// Conflicts (docs/sync.md § Conflicts): a device whose value another device
/// replaced without having seen it gets one line in its change log; a
/// sequential overwrite is no conflict, and neither is a write of a format
/// that did not say what its writer had seen.
@Suite("Conflicts")
struct ConflictTests {
    let fixture = SyncFixture()

    /// A clock that reads `milliseconds` (then moves on by itself, as the HLC's counter does).
    static func clock(at milliseconds: UInt64) -> HybridLogicalClock { HybridLogicalClock { milliseconds } }

    /// The conflict lines of `store`'s change log, as JSON objects.
    static func conflicts(_ store: DeviceStore) -> [[String: Any]] {
        lines(store).filter { $0["reason"] as? String == "Conflict" }
    }

    static func lines(_ store: DeviceStore) -> [[String: Any]] {
        String(decoding: store.changeLogContents(), as: UTF8.self).split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }

    /// Two devices that write apart (each on its own copy of the store, as two
    /// machines whose synchronizer is not running), then see each other's folders.
    private func apart(aAt: UInt64, bAt: UInt64, _ write: (DeviceStore, DeviceStore) throws -> Void) throws -> (DeviceStore, DeviceStore) {
        let a = try fixture.open("a", sync: "sync-a", clock: Self.clock(at: aAt))
        try Files.makeDirectory(fixture.root.path + "/sync-b")
        try copyFile(fixture.root.path + "/sync-a/store-id", to: fixture.root.path + "/sync-b/store-id")
        let b = try fixture.open("b", sync: "sync-b", clock: Self.clock(at: bAt))
        try write(a, b)
        try join(a, b)
        return (a, b)
    }

    /// Copies each device's folder to the other's copy of the store, and lets both read it.
    private func join(_ a: DeviceStore, _ b: DeviceStore) throws {
        a.reachSyncPoint()
        b.reachSyncPoint()
        try copyFolder(fixture.folder(of: a, sync: "sync-a"), to: fixture.folder(of: a, sync: "sync-b"))
        try copyFolder(fixture.folder(of: b, sync: "sync-b"), to: fixture.folder(of: b, sync: "sync-a"))
        a.refresh()
        b.refresh()
    }

    @Test("concurrent writes: the device whose value lost gets one line naming both versions and the restore command")
    func concurrentWritesAreCalledOut() throws {
        defer { fixture.cleanup() }
        let (a, b) = try apart(aAt: 1_795_000_000_123, bAt: 1_795_000_001_456) { a, b in
            try a.set(.string("light"), forKey: "theme")
            try b.set(.string("dark"), forKey: "theme")
        }
        defer { a.close(); b.close() }
        #expect(a.value(forKey: "theme") == .string("dark"))
        let lines = Self.conflicts(a)
        try #require(lines.count == 1, "\(Self.lines(a))")
        let line = lines[0]
        #expect(line["keys"] as? [String] == ["theme"])
        #expect(line["code"] as? Int == 0)
        let lost = try #require(line["lost"] as? [String: String]), winner = try #require(line["winner"] as? [String: String])
        #expect(lost == ["device": "a", "id": a.deviceID.hex, "time": "2026-11-18T11:06:40.123Z"])
        #expect(winner == ["device": "b", "id": b.deviceID.hex, "time": "2026-11-18T11:06:41.456Z"])
        let state = fixture.root.path + "/state-a"
        #expect(line["restore"] as? String == "kvfs restore theme 2026-11-18T11:06:40.123Z@a --sync-dir \(fixture.root.path)/sync-a --state-dir \(state)")
        // The ServerChange of the key, as for any write of another device.
        #expect(Self.lines(a).contains { $0["reason"] as? String == "ServerChange" && $0["keys"] as? [String] == ["theme"] })
        #expect(Self.conflicts(b).isEmpty)  // its value won
    }

    @Test("history marks the version that lost, the same on both devices, and the line's restore command names it as history does")
    func historyMarksTheLostVersion() throws {
        defer { fixture.cleanup() }
        let (a, b) = try apart(aAt: 1_795_000_000_123, bAt: 1_795_000_001_456) { a, b in
            try a.set(.string("light"), forKey: "theme")
            try b.set(.string("dark"), forKey: "theme")
        }
        defer { a.close(); b.close() }
        for store in [a, b] {
            let versions = store.history(forKey: "theme")
            #expect(versions.map(\.name) == ["2026-11-18T11:06:40.123Z@a", "2026-11-18T11:06:41.456Z@b"])
            #expect(versions.map(\.lost) == [true, false], "on \(store.name(of: store.deviceID))")
            #expect(versions.map(\.isCurrent) == [false, true])
        }
        let restore = try #require(Self.conflicts(a).first?["restore"] as? String)
        let name = try #require(restore.split(separator: " ").dropFirst(3).first.map(String.init))
        let lost = try #require(a.version(named: name, ofKey: "theme"))
        try a.restore(lost, forKey: "theme")
        #expect(a.value(forKey: "theme") == .string("light"))
    }

    @Test("sequential overwrites (a put, a rename onto the key, made after reading the value) are no conflicts")
    func sequentialOverwritesAreNot() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        b.refresh(after: a)
        try b.set(.integer(2), forKey: "k")  // b had read a's value
        try b.removeValue(forKey: "gone")  // nothing to remove: no record
        try a.set(.integer(3), forKey: "other")
        b.refresh(after: a)
        try b.rename("other", to: "moved")
        a.refresh(after: b)
        #expect(a.value(forKey: "k") == .integer(2) && a.value(forKey: "moved") == .integer(3))
        #expect(Self.conflicts(a).isEmpty, "\(Self.lines(a))")
        #expect(Self.lines(a).contains { $0["reason"] as? String == "ServerChange" })
        #expect(a.history(forKey: "k").map(\.lost) == [false, false])
        #expect(b.history(forKey: "k").map(\.lost) == [false, false])
    }

    @Test("writes made without seeing the value — a put and then its removal, a rename onto it — replace it concurrently, one line a key")
    func removalsAndRenamesConflict() throws {
        defer { fixture.cleanup() }
        let (a, b) = try apart(aAt: 1_795_000_000_000, bAt: 1_795_000_005_000) { a, b in
            try a.set(.integer(1), forKey: "removed")
            try a.set(.integer(1), forKey: "target")
            try b.set(.integer(2), forKey: "removed")
            try b.removeValue(forKey: "removed")
            try b.set(.integer(3), forKey: "source")
            try b.rename("source", to: "target")
        }
        defer { a.close(); b.close() }
        #expect(Self.conflicts(a).map { $0["keys"] as? [String] } == [["removed"], ["target"]])
    }

    @Test("the base survives the writer's compaction, and a conflict is told once: not again at the next open")
    func toldOnceEvenAfterCompactionAndReopening() throws {
        defer { fixture.cleanup() }
        var (a, b) = try apart(aAt: 1_795_000_000_000, bAt: 1_795_000_005_000) { a, b in
            try a.set(.integer(1), forKey: "k")
            try b.set(.integer(2), forKey: "k")
            b.compact()  // a reads b's write from its snapshot
        }
        #expect(Self.conflicts(a).count == 1)
        a.close()
        a = try fixture.open("a", sync: "sync-a", clock: Self.clock(at: 1_795_000_009_000))
        defer { a.close(); b.close() }
        #expect(Self.conflicts(a).count == 1)
        b.close()
        b = try fixture.open("b", sync: "sync-b", clock: Self.clock(at: 1_795_000_009_000))
        #expect(Self.conflicts(b).isEmpty)
    }

    @Test("a value replaced while its device was away is told when it opens again")
    func toldAtOpenWhenReplacedWhileAway() throws {
        let a = try fixture.open("a", sync: "sync-a", clock: Self.clock(at: 1_795_000_000_000))
        try Files.makeDirectory(fixture.root.path + "/sync-b")
        try copyFile(fixture.root.path + "/sync-a/store-id", to: fixture.root.path + "/sync-b/store-id")
        let b = try fixture.open("b", sync: "sync-b", clock: Self.clock(at: 1_795_000_005_000))
        defer { b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        a.close()
        try b.set(.integer(2), forKey: "k")
        b.reachSyncPoint()
        try copyFolder(fixture.folder(of: b, sync: "sync-b"), to: fixture.root.path + "/sync-a/devices/" + b.deviceID.hex)
        let again = try fixture.open("a", sync: "sync-a", clock: Self.clock(at: 1_795_000_009_000))
        defer { again.close() }
        #expect(Self.conflicts(again).map { $0["keys"] as? [String] } == [["k"]])
    }

    @Test("a record of format 2 says nothing of what its writer had seen: never a conflict",
          .disabled(if: TestSealing.sealsEverything, "a sealed store refuses a plain record, whatever its format (SealedStoreTests)"))
    func formatTwoRecordsNeverConflict() throws {
        let a = try fixture.open("a", clock: Self.clock(at: 1_795_000_000_000))
        defer { a.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        let other = DeviceID.random()
        var payload = RecordCodec.encode(record(other, 1_795_000_005_000, .put(key: "k", value: .integer(2))))
        #expect(payload.last == 0)  // its base, unknown: version 2 had none
        payload.removeLast()
        payload[0] = 2
        try append(framed(payload), to: fixture.root.path + "/sync/devices/\(other.hex)/journal-0000000000000001.log")
        a.refresh()
        #expect(a.value(forKey: "k") == .integer(2))
        #expect(Self.conflicts(a).isEmpty)
        #expect(Self.lines(a).contains { $0["reason"] as? String == "ServerChange" && $0["keys"] as? [String] == ["k"] })
    }

    @Test("the restore command names the store as the command line does")
    func restoreCommandNamesTheStore() throws {
        let lost = LostWrite(key: "it's /x", lost: Stamp(time: HLCTimestamp(milliseconds: 1_795_000_000_007, counter: 3), device: .random()),
                             winner: Stamp(time: HLCTimestamp(milliseconds: 1_795_000_000_008, counter: 0), device: .random()))
        let report = ConflictReport(lost, name: { _ in "my laptop/2" }, storeOptions: ["--store", "com.example.notes"])
        #expect(report.restore == #"kvfs restore 'it'\''s /x' '2026-11-18T11:06:40.007Z@my laptop%2F2' --store com.example.notes"#)
        let named = ConflictReport(lost, version: "2026-11-18T11:06:40.007Z@my laptop%2F2~2", name: { _ in "my laptop/2" }, storeOptions: [])
        #expect(named.restore == #"kvfs restore 'it'\''s /x' '2026-11-18T11:06:40.007Z@my laptop%2F2~2'"#)
    }
}

/// Copies one file.
private func copyFile(_ from: String, to: String) throws {
    try Files.writeAtomically(to, try #require(try Files.read(from)))
}
