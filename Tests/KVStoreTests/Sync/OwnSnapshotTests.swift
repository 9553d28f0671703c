import Foundation
import Testing
@testable import KVStore

/// A device's own compaction: the snapshot it wrote is not read back (the
/// merge and history hold what it keeps), while another process's
/// compaction of the same folder, and its writes, still are.
@Suite("Own snapshots")
struct OwnSnapshotTests {
    let fixture = SyncFixture()

    /// The generation of the snapshot `store`'s reader of its own folder has read, and what that reader finds next.
    private func ownReader(_ store: DeviceStore) -> (snapshot: UInt64?, next: DeviceFolderReader.Batch) {
        store.journal.folder.withLock { folder in (folder.reader.snapshotGeneration, folder.reader.readNew()) }
    }

    @Test("after its own compaction a store's reader is past the snapshot it wrote: nothing to read again, and its writes since are read once")
    func ownSnapshotIsNotReadAgain() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        for round in 0..<3 {
            for index in 0..<50 { try a.set(.string("\(round) " + String(repeating: "v", count: 500)), forKey: StoreKey("k\(index)")) }
        }
        a.compact()
        let generation = a.journal.folder.withLock { $0.writer.generation }
        let after = ownReader(a)
        #expect(after.snapshot == generation)
        #expect(!after.next.replacesAll && after.next.records.isEmpty, "read again: \(after.next.records.count) records")
        try a.set(.integer(1), forKey: "later")
        #expect(a.entry(forKey: "later")?.value == .integer(1))
        #expect(ownReader(a).next.records.isEmpty, "its own append is not news to it")
        #expect(a.history(forKey: "k0").count == 3 && a.historyKeys.count == 51)
    }

    @Test("a snapshot this process is writing is not read should it appear before its compaction says it is written; then it is taken as read")
    func aSnapshotBeingWrittenIsNotRead() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        for index in 0..<20 { try a.set(.integer(Int64(index)), forKey: StoreKey("k\(index)")) }
        a.compact()
        #expect(a.journal.folder.withLock { $0.reader.snapshotBeingWritten } == nil, "a compaction that finished leaves no mark")
        // The snapshot file appears (another process of the device writes it here) while this reader takes it for its own.
        let b = try fixture.open("a")
        defer { b.close() }
        try b.set(.integer(99), forKey: "k0")
        b.compact()
        let generation = b.journal.folder.withLock { $0.writer.generation }
        let (skipped, taken) = a.journal.folder.withLock { folder in
            folder.reader.writing(snapshot: generation)
            let skipped = folder.reader.readNew()
            folder.reader.wrote(snapshot: generation)
            return (skipped, (folder.reader.snapshotGeneration, folder.reader.snapshotBeingWritten))
        }
        #expect(!skipped.replacesAll, "the snapshot being written was read: \(skipped.records.count) records")
        #expect(taken.0 == generation && taken.1 == nil)
    }

    @Test("a snapshot another process of the device wrote is read: its values show here")
    func anotherProcessesSnapshotIsRead() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        let b = try fixture.open("a")  // the same state directory: another process of the device
        try b.set(.integer(2), forKey: "k")
        b.compact()
        b.close()
        a.refresh()
        #expect(a.entry(forKey: "k")?.value == .integer(2))
        let generation = try #require(DeviceFolder(path: fixture.folder(of: a)).listing().snapshots.max())
        #expect(ownReader(a).snapshot == generation)
    }
}
