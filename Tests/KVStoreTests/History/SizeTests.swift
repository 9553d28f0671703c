import Foundation
import Testing
@testable import KVStore

/// Every field of every version `store` keeps of every key: what history
/// lists (name, stamp, device name, size, whether current, whether lost) and
/// the version's record as its folder holds it (value, base and rank; a
/// checksum and a length, so that megabytes compare cheaply), one line each.
func everyVersion(_ store: DeviceStore) -> [String] {
    store.historyKeys.flatMap { key in
        let records = store.engine.withLock { state in
            state.keptVersions(of: key).map { kept in
                StoredRecord(key: key, stamp: kept.version.stamp, folder: state.sync.folder(of: kept.version.folder),
                             location: kept.version.location).read().map(RecordCodec.encode)
            }
        }
        return zip(store.history(forKey: key), records).map { version, record in
            "\(key) \(version.name) \(version.stamp.time.rawValue) \(version.deviceName) removal=\(version.isRemoval) size=\(version.size) "
                + "current=\(version.isCurrent) lost=\(version.lost) record=\(record.map { "\(CRC32C.checksum($0)) \($0.count)" } ?? "gone")"
        }
    }
}

/// Docs/format.md § Limits: whatever the engine writes, every reader reads
/// back whole, at any size the settings allow; every write is all or nothing.
@Suite("Sizes")
struct SizeTests {
    let fixture = SyncFixture()

    /// Bytes of a value that a string of `count` characters from `seed` holds.
    private func text(_ count: Int, _ seed: Int) -> PropertyListValue {
        .string(String(seed) + " " + String(repeating: Character(UnicodeScalar(UInt8(97 + seed % 26))), count: count))
    }

    @Test("a file read a window at a time scans as it does whole: frames across windows, junk across them, a torn tail, junk past a window")
    func windowsScanAsTheWholeFile() throws {
        defer { fixture.cleanup() }
        let device = DeviceID.random()
        let records = (0..<16).map { index in
            record(device, UInt64(index + 1), .put(key: StoreKey("k\(index)"), value: text(300_000 + index * 97_000, index)))
        }
        var junk = SystemRandomNumberGenerator()
        let noise = (0..<3000).map { _ in UInt8.random(in: 0...255, using: &junk) }
        let clean = frames(records)
        #expect(clean.count > RecordFrame.window + RecordFrame.maxFrame, "\(clean.count) bytes: past one window")
        let boundary = RecordFrame.window - RecordFrame.maxFrame  // where the first window stops deciding
        let variants: [(String, [UInt8])] = [
            ("clean", clean),
            ("junk across the first window's end, a torn tail", Array((Array(clean[..<boundary]) + noise + Array(clean[boundary...])).dropLast(1000))),
            ("junk longer than a window at the end", clean + (0..<(RecordFrame.window + 5000)).map { UInt8(truncatingIfNeeded: $0 &* 7919) }),
            ("a frame skipped for good, a whole frame and junk just before a window's end", {
                var bytes = clean
                bytes.insert(contentsOf: framed(Array(repeating: 9, count: 40)) + RecordFrame.encode(records[0]) + noise, at: RecordFrame.window - 100)
                return bytes
            }()),
        ]
        let folder = fixture.root.path + "/devices/" + device.hex
        for (name, bytes) in variants {
            try Files.makeDirectory(folder)
            try Files.writeAtomically(folder + "/journal-0000000000000001.log", bytes)
            let whole = bytes.withUnsafeBytes { RecordFrame.scan($0) }
            for start in name == "clean" ? [0, RecordFrame.encode(records[0]).count] : [0] {
                let streamed = try #require(try DeviceFolder(path: folder).scanFrames("journal-0000000000000001.log", from: start))
                let reference = start == 0 ? whole : bytes.withUnsafeBytes { RecordFrame.scan($0, from: start) }
                #expect(streamed.records == reference.records, "\(name) from \(start)")
                #expect(streamed.frames == reference.frames, "\(name) from \(start)")
                #expect(streamed.skipped == reference.skipped && streamed.unreadable == reference.unreadable, "\(name) from \(start)")
                let offsets: [Int] = [streamed.resumeOffset, streamed.settledOffset, streamed.settledCount, streamed.end]
                #expect(offsets == [reference.resumeOffset, reference.settledOffset, reference.settledCount, reference.end], "\(name) from \(start)")
            }
        }
    }

    @Test("a snapshot past 16 MiB reads back whole: on the device that wrote it after a remount, on another device, on a fresh one")
    func aSnapshotPast16MiBReadsBackWhole() throws {
        var fixture = self.fixture
        fixture.retention = HistoryRetention(days: 30, bytes: 40 << 20)
        defer { fixture.cleanup() }
        var a = try fixture.open("a")
        let b = try fixture.open("b")
        defer { b.close() }
        try a.set(.string("small"), forKey: "b")
        for round in 0..<36 { try a.set(text(520_000, round), forKey: "k") }  // the issue's reproduction, in the library
        a.compact()
        let snapshot = try #require(Files.list(fixture.folder(of: a)).first { $0.hasPrefix("snapshot-") })
        let size = try #require(try Files.read(fixture.folder(of: a) + "/" + snapshot)).count
        #expect(size > 16 << 20, "\(size) bytes")
        let expected = everyVersion(a)
        #expect(expected.count == 37, "\(expected.count) versions")
        a.close()
        a = try fixture.open("a")
        defer { a.close() }
        b.refresh()
        let fresh = try fixture.open("fresh")
        defer { fresh.close() }
        for store in [a, b, fresh] {
            #expect(store.value(forKey: "b") == .string("small"))
            #expect(store.value(forKey: "k") == text(520_000, 35))
            #expect(everyVersion(store) == expected)
            #expect(try store.history(forKey: "k").map { try store.value(of: $0) } == (0..<36).map { Optional(text(520_000, $0)) })
        }
        #expect(!fixture.warnings.contain("incomplete"), "\(fixture.warnings.all)")
    }

    @Test("a segment past 16 MiB is read whole at once: every record with where it lies, as history's index needs")
    func aSegmentPast16MiBKeepsEveryLocation() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a", compactionFloor: 64 << 20)
        defer { a.close() }
        for round in 0..<40 { try a.set(text(500_000, round), forKey: "k") }
        let reader = DeviceFolderReader(device: a.deviceID, folder: DeviceFolder(path: fixture.folder(of: a)), ownFolder: true, warn: { _ in })
        let batch = reader.readNew()
        #expect(reader.tailOffset > 16 << 20, "\(reader.tailOffset) bytes")
        #expect(batch.records.count == 40 && batch.locations.count == 40)
        for (record, location) in zip(batch.records, batch.locations) {
            #expect(DeviceFolder(path: fixture.folder(of: a)).record(at: location) == record)
        }
        #expect(reader.readNew().records.isEmpty, "nothing is left for a later read")
    }

    @Test("a retention past the largest is refused with a reason naming the limit; one read from a folder counts as the largest")
    func retentionPastTheLimitIsRefused() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a")
        defer { a.close() }
        try a.setRetention(HistoryRetention(days: 30, bytes: HistoryRetention.maximumBytes))
        #expect(a.retention.bytes == HistoryRetention.maximumBytes)
        #expect(throws: KVStoreError.self) { try a.setRetention(HistoryRetention(days: 30, bytes: HistoryRetention.maximumBytes + 1)) }
        do {
            try a.setRetention(HistoryRetention(days: 30, bytes: 100 << 30))
        } catch {
            #expect("\(error)".contains("134217728") && "\(error)".contains("128 MiB") && !"\(error)".contains("\n"), "\(error)")
        }
        let setting = RetentionSetting(json: Array(#"{"bytes":1000000000000,"days":30,"stamp":"1"}"#.utf8), in: a.deviceID)
        #expect(setting?.retention == HistoryRetention(days: 30, bytes: HistoryRetention.maximumBytes))
    }

    @Test("retention counts a version's record on disk: long keys with short values and a full history make a snapshot whose history part is within the bytes")
    func retentionCountsRealBytes() throws {
        var fixture = self.fixture
        let budget = 256 << 10
        fixture.retention = HistoryRetention(days: 30, bytes: budget)
        defer { fixture.cleanup() }
        let a = try fixture.open("a")
        defer { a.close() }
        let keys = (0..<20).map { StoreKey(String(repeating: "k", count: 120) + "\($0)") }
        for round in 0..<120 {  // 2,400 versions of about 190 bytes each: 450 KB, past the budget
            for key in keys { try a.set(.integer(Int64(round)), forKey: key) }
        }
        a.compact()
        let snapshot = try #require(Files.list(fixture.folder(of: a)).first { $0.hasPrefix("snapshot-") })
        let bytes = try #require(try Files.read(fixture.folder(of: a) + "/" + snapshot))
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        let current = Set(keys.map { a.entry(forKey: $0)!.stamp })
        let history = zip(scan.records, scan.frames).filter { !current.contains($0.0.stamp) && $0.0.changes.count == 1 }
        let historyBytes = history.reduce(0) { $0 + $1.1.count }
        let largest = history.map(\.1.count).max() ?? 0
        #expect(historyBytes <= budget && historyBytes > budget - largest, "history part \(historyBytes) bytes, budget \(budget)")
        #expect(bytes.count - historyBytes == frames(scan.records.filter { current.contains($0.stamp) || $0.changes.isEmpty }).count)
    }

    @Test("a compaction keeps every field of every version it copies, the base that marks a lost write included, on every device")
    func compactionsKeepEveryField() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close() }
        try a.set(.string("a's"), forKey: "k")
        usleep(2000)  // b's write comes later by the wall clock, so it wins
        try b.set(.string("b's"), forKey: "k")  // concurrent: b has not read a's
        try b.set(.string("b's again"), forKey: "k")  // b's first is now an older version in b's folder: copied by its compactions
        try b.set(.integer(1), forKey: "other")
        a.refresh()
        b.refresh()
        #expect(a.history(forKey: "k").first?.lost == true, "a's value lost to b's concurrent write")
        let before = everyVersion(a)
        #expect(before.count == 4 && everyVersion(b) == before)
        for _ in 0..<3 {
            a.compact()
            b.compact()
            a.refresh()
            b.refresh()
            #expect(everyVersion(a) == before)
            #expect(everyVersion(b) == before)
        }
        let fresh = try fixture.open("fresh")
        defer { fresh.close() }
        #expect(everyVersion(fresh) == before)
        #expect(fresh.history(forKey: "k").first?.lost == true)
    }
}

/// `kvfs import` is one record: every reader, and a crash, sees all of it or none.
@Suite("Import as one record")
struct BatchTests {
    let fixture = SyncFixture()
    let values: [StoreKey: PropertyListValue] = Dictionary(uniqueKeysWithValues: (0..<50).map { ("key\($0)", .string("value \($0)")) })

    @Test("an import is one batch record in the journal, and another device reads its values, ranks and bases as the writer has them")
    func oneRecord() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close() }
        try a.set(.string("old"), forKey: "key3")
        b.refresh()
        try a.setValues(values)
        let records = DeviceFolderReader(device: a.deviceID, folder: DeviceFolder(path: fixture.folder(of: a)), warn: { _ in }).readNew().records
        #expect(records.count == 2, "\(records.count) records")
        guard case let .batch(puts) = records.last?.operation else { Issue.record("not a batch: \(String(describing: records.last))"); return }
        #expect(puts.map(\.key) == values.keys.sorted())
        #expect(puts.first { $0.key == "key3" }?.rank == records[0].stamp, "an overwrite keeps its key's place in the quota's order")
        #expect(records.last?.bases.count == 50 && records.last?.bases.contains(.version(records[0].stamp)) == true)
        b.refresh()
        #expect(b.values == a.values)
        #expect(everyVersion(b) == everyVersion(a))
        a.compact()
        b.refresh()
        #expect(everyVersion(b) == everyVersion(a))
    }

    @Test("a reader of the journal cut at any byte of an import (a synchronizer copying it, a crash mid-write) sees all of it or none")
    func neverAPrefix() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a")
        try a.set(.integer(1), forKey: "before")
        try a.setValues(values)
        a.close()
        let segment = try #require(try Files.read(fixture.folder(of: a) + "/journal-0000000000000001.log"))
        let copy = fixture.root.path + "/copy/devices/" + a.deviceID.hex
        try Files.makeDirectory(copy)
        for cut in stride(from: 0, through: segment.count, by: 97) + [segment.count] {
            try Files.writeAtomically(copy + "/journal-0000000000000001.log", Array(segment[..<cut]))
            let keys = Set(DeviceFolderReader(device: a.deviceID, folder: DeviceFolder(path: copy), warn: { _ in }).readNew().records
                .flatMap { $0.changes.map(\.key) })
            #expect(keys.isSubset(of: ["before"]) || keys == Set(values.keys).union(["before"]), "cut at \(cut): \(keys.count) keys")
        }
    }

    @Test("a device killed in the middle of writing an import opens again with none of it, and goes on")
    func aCrashMidImportLeavesNone() throws {
        defer { fixture.cleanup() }
        var a = try fixture.open("a")
        try a.set(.integer(1), forKey: "before")
        a.close()
        let path = fixture.folder(of: a) + "/journal-0000000000000001.log"
        let start = try #require(try Files.read(path)).count
        a = try fixture.open("a")
        try a.setValues(values)
        a.close()
        let whole = try #require(try Files.read(path))
        for cut in [start + 1, start + 8, (start + whole.count) / 2, whole.count - 1] {
            try Files.writeAtomically(path, Array(whole[..<cut]))  // what a crash inside the one write(2) leaves
            a = try fixture.open("a")
            #expect(a.values == ["before": .integer(1)], "cut at \(cut)")
            try a.set(.integer(2), forKey: "after")
            #expect(a.values == ["before": .integer(1), "after": .integer(2)])
            a.close()
        }
    }
}
