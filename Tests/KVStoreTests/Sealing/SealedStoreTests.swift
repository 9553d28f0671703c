import Foundation
import Testing
@testable import KVStore

/// Issue 26 items 1, 2 (records): a sealed store's devices read each other's
/// values, a third party with write access to the sync directory and no keys
/// cannot make any of them merge what it plants, and `grep -r` of the sync
/// directory finds no value or key name written. Each attack works on the
/// real files, as such a writer would (docs/threat-model.md).
@Suite("Sealed stores: refusals and what the folder shows")
struct SealedStoreTests {
    let fixture = SyncFixture()

    init() { TestSealing.seal(fixture.root.path + "/sync") }

    /// A sealed store of devices a and b, a having written `count` values (one write each) that b has read:
    /// a's segment holds `count` records and the mark that signs them.
    func twoDevices(_ count: Int = 3) throws -> (DeviceStore, DeviceStore, [StoreKey: PropertyListValue]) {
        let a = try fixture.open("a"), b = try fixture.open("b")
        var expected: [StoreKey: PropertyListValue] = [:]
        for index in 0..<count {
            try a.set(.string("secret \(index)"), forKey: "k\(index)")
            expected["k\(index)"] = .string("secret \(index)")
        }
        b.refresh(after: a)
        #expect(b.values == expected)
        return (a, b, expected)
    }

    func segment(of store: DeviceStore, _ generation: UInt64 = 1) -> String {
        fixture.folder(of: store) + "/" + DeviceFolder.segmentName(generation)
    }

    /// The frames of a file, split at their lengths.
    func split(_ path: String) throws -> [[UInt8]] {
        let bytes = try #require(try Files.read(path))
        var frames: [[UInt8]] = [], offset = 0
        while offset + RecordFrame.headerSize <= bytes.count {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            frames.append(Array(bytes[offset..<offset + RecordFrame.headerSize + length]))
            offset += RecordFrame.headerSize + length
        }
        return frames
    }

    func rewrite(_ path: String, _ frames: [[UInt8]]) throws {
        try Files.writeAtomically(path, Array(frames.joined()))
    }

    /// Whether `store`'s status and log name `folder` as refused.
    func refuses(_ store: DeviceStore, _ folder: String, saying reason: String) -> Bool {
        store.status().warnings.contains { $0.kind == .refused && ($0.file ?? "").hasPrefix(folder) && $0.message.contains(reason) }
            && fixture.warnings.contain(reason)
    }

    @Test("two sealed devices read each other's values, history and conflicts as plain ones do")
    func readsEachOther() throws {
        defer { fixture.cleanup() }
        let (a, b, _) = try twoDevices()
        defer { a.close(); b.close() }
        try b.set(.integer(7), forKey: "k0")
        a.refresh(after: b)
        #expect(a.value(forKey: "k0") == .integer(7))
        let versions = a.history(forKey: "k0")
        #expect(versions.count == 2)
        #expect(try versions.map { try a.value(of: $0) }.contains(.string("secret 0")), "an old version is read back by its location")
        #expect(!fixture.warnings.contain("refused"))
    }

    @Test("a record forged by a non-member (plain, or in a folder of its own) is refused, named, and changes no value")
    func forgedByNonMember() throws {
        defer { fixture.cleanup() }
        let (a, b, expected) = try twoDevices()
        defer { a.close(); b.close() }
        try append(frames([record(a.deviceID, 9_999_999_999_999, .put(key: "k0", value: .string("forged")))]), to: segment(of: a))
        let outsider = DeviceID.random()
        let planted = fixture.root.path + "/sync/devices/" + outsider.hex
        try append(frames([record(outsider, 9_999_999_999_999, .put(key: "k1", value: .string("forged")))]), to: planted + "/" + DeviceFolder.segmentName(1))
        _ = b.refresh()
        #expect(b.values == expected)
        #expect(refuses(b, fixture.folder(of: a), saying: "a plain record in a sealed store"))
        #expect(refuses(b, planted, saying: "not a member"))
        _ = a.refresh()
        #expect(a.values == expected)
    }

    @Test("a record copied from another device's folder is refused")
    func copiedFromAnotherFolder() throws {
        defer { fixture.cleanup() }
        let (a, b, expected) = try twoDevices(1)
        defer { a.close(); b.close() }
        for key in ["b0", "b1", "b2"] { try b.set(.string(key), forKey: StoreKey(key)) }
        b.reachSyncPoint()
        let c = try fixture.open("c")
        defer { c.close() }
        // b's third record has index 2, the index a's next frame would have (its record 0, then its mark).
        try append(try split(segment(of: b))[2], to: segment(of: a))
        _ = c.refresh()
        #expect(c.values == expected.merging(["b0": .string("b0"), "b1": .string("b1"), "b2": .string("b2")]) { $1 })
        #expect(refuses(c, fixture.folder(of: a), saying: "does not open"))
    }

    @Test("an altered record is refused until the real one is back, and no value changes meanwhile")
    func altered() throws {
        defer { fixture.cleanup() }
        let (a, b, expected) = try twoDevices()
        defer { a.close(); b.close() }
        try a.set(.string("new"), forKey: "k3")
        a.reachSyncPoint()
        let path = segment(of: a)
        var frames = try split(path)
        let real = frames[4]  // records 0 to 2, their mark, k3's record, its mark
        frames[4] = SealedRecordTests.altered(real, at: 30)
        try rewrite(path, frames)
        _ = b.refresh()
        #expect(b.values == expected)
        #expect(refuses(b, path, saying: "does not open"))
        frames[4] = real
        try rewrite(path, frames)
        _ = b.refresh()
        #expect(b.value(forKey: "k3") == .string("new"))
    }

    @Test("records replayed or reordered are refused from the first out of its place")
    func replayedAndReordered() throws {
        defer { fixture.cleanup() }
        let (a, b, _) = try twoDevices(1)
        defer { a.close(); b.close() }
        // Each record signed by a mark of its own: r0 M r1 M r2 M.
        for index in 1..<3 {
            try a.set(.string("secret \(index)"), forKey: StoreKey("k\(index)"))
            a.reachSyncPoint()
        }
        let expected: [StoreKey: PropertyListValue] = ["k0": .string("secret 0"), "k1": .string("secret 1"), "k2": .string("secret 2")]
        _ = b.refresh()
        #expect(b.values == expected)
        let path = segment(of: a)
        try append(try split(path)[0], to: path)
        _ = b.refresh()
        #expect(b.values == expected)
        #expect(refuses(b, path, saying: "replayed or reordered"))
        // A device that has read nothing of a's folder yet, which a third party reordered.
        var frames = try split(path)
        frames.removeLast()
        frames.swapAt(2, 4)
        try rewrite(path, frames)
        let c = try fixture.open("c")
        defer { c.close() }
        #expect(c.values == ["k0": .string("secret 0")], "what comes before the reordered records is read")
        #expect(refuses(c, path, saying: "replayed or reordered"))
    }

    @Test("a folder rolled back (a segment cut short, or an older generation put back) is refused, and nothing merged is taken back")
    func rolledBack() throws {
        defer { fixture.cleanup() }
        let (a, b, expected) = try twoDevices()
        defer { a.close(); b.close() }
        let path = segment(of: a)
        let before = try split(path)
        try rewrite(path, Array(before[0..<1]))
        _ = b.refresh()
        #expect(b.values == expected)
        #expect(refuses(b, path, saying: "went back"))
        // An older generation: a's folder as it was, after a compacted past it.
        try rewrite(path, before)
        let old = fixture.root.path + "/old"
        try copyFolder(fixture.folder(of: a), to: old)
        a.compact()
        try a.set(.string("after"), forKey: "k9")
        b.refresh(after: a)
        #expect(b.value(forKey: "k9") == .string("after"))
        try copyFolder(old, to: fixture.folder(of: a))
        _ = b.refresh()
        #expect(b.values == expected.merging(["k9": .string("after")]) { $1 })
        #expect(refuses(b, fixture.folder(of: a), saying: "went back"))
    }

    @Test("a device without the store's keys meeting a sealed store says so, and writes nothing in the sync directory")
    func plainDeviceMeetsSealedStore() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a")
        defer { a.close() }
        try a.set(.string("sealed"), forKey: "k")
        a.reachSyncPoint()  // its mark, which its schedule would write while p opens
        TestSealing.keepPlain(state: fixture.root.path + "/state-p")
        let before = try fileTree(fixture.root.path + "/sync")
        #expect(throws: KVStoreError.notMember(path: fixture.root.path + "/sync")) { try fixture.open("p") }
        #expect(try fileTree(fixture.root.path + "/sync") == before)
        #expect(KVStoreError.notMember(path: "/s").description.contains("not a member"))
    }

    @Test("grep -r of a sealed store's sync directory finds no value or key name written, in segments, snapshots or history")
    func grepFindsNothing() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a", compactionFloor: 1)
        let b = try fixture.open("b")
        defer { a.close(); b.close() }
        var written: [String] = []
        for index in 0..<20 {
            let key = "key-name-\(index)", value = "value-written-\(index)"
            try a.set(.string(value), forKey: StoreKey(key))
            try a.set(.string(value + "-again"), forKey: StoreKey(key))
            written += [key, value]
        }
        try a.setValues(["batch-key": .string("batch-value"), "batch-key-2": .string("batch-value-2")])
        written += ["batch-key", "batch-value"]
        a.compact()
        try a.set(.string("after-compaction-value"), forKey: "after-compaction-key")
        written += ["after-compaction-key", "after-compaction-value"]
        b.refresh(after: a)
        #expect(b.values.count == 23)
        #expect(b.history(forKey: "key-name-3").count == 2, "history is there, sealed")
        #expect(!Files.list(fixture.folder(of: a)).filter { $0.hasPrefix("snapshot-") }.isEmpty)
        for text in written {
            let grep = try runShell("grep -r -l -a -F -e \"$TEXT\" sync", in: fixture.root.path, environment: ["TEXT": text, "PATH": "/usr/bin:/bin"])
            #expect(grep.status == 1, "\(text) found: \(grep)")
        }
    }

    @Test("a sealed segment reaches the compaction floor in its records' plain bytes, not their padded sealed ones: it compacts as often as a plain one")
    func compactionFloorCountsPlainBytes() throws {
        defer { fixture.cleanup() }
        let floor = 8192
        let a = try fixture.open("a", compactionFloor: floor)
        defer { a.close() }
        let writer = { a.journal.folder.withLock { (bytes: $0.writer.segmentBytes, plain: $0.writer.segmentPlainBytes, generation: $0.writer.generation) } }
        let snapshots = { DeviceFolder(path: fixture.folder(of: a)).listing().snapshots }
        var index = 0
        func write(until done: () -> Bool) throws {
            while !done() && writer().generation == 1 && index < 5000 {
                try a.set(.string("v\(index)"), forKey: StoreKey("k\(index % 20)"))
                index += 1
            }
        }
        try write { writer().bytes > floor }
        let reached = writer()
        #expect(reached.generation == 1 && reached.bytes > floor, "past the floor in sealed bytes without compacting")
        #expect(reached.plain * 3 / 2 < reached.bytes, "padded sealed records take more bytes than their plain frames")
        #expect(reached.plain <= floor, "short of the floor in plain bytes")
        try a.flush()  // a compaction queued would be done by now
        #expect(snapshots().isEmpty, "compacted while the records' plain bytes were under the floor")
        try write { writer().plain > floor }
        try a.flush()
        #expect(!snapshots().isEmpty, "not compacted once the records' plain bytes passed the floor")
        #expect(writer().generation == 2 && writer().plain <= writer().bytes, "counted again from the new segment")
    }
}
