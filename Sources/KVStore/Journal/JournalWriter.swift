import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Appends this device's records to its folder, and compacts them.
///
/// A record is in the file (the kernel's page cache) when `append` returns, so
/// killing the process loses nothing appended; `sync` makes it durable on disk.
final class JournalWriter {
    let folder: DeviceFolder
    private var descriptor: Int32 = -1
    private(set) var generation: UInt64
    /// Bytes in the current segment: what compaction weighs against the snapshot.
    private(set) var segmentBytes = 0
    private(set) var snapshotBytes = 0
    private(set) var needsSync = false

    /// Segment size under which compaction is not worth it (tests lower it).
    var compactionFloor = 1 << 20

    /// Opens the folder for appending, after `reader` has recovered what it holds:
    /// a torn or corrupt tail of the last segment is cut off so appends continue cleanly.
    init(folder: DeviceFolder, recoveredBy reader: DeviceFolderReader) throws(KVStoreError) {
        self.folder = folder
        generation = reader.segmentGeneration
        let path = folder.segmentPath(generation)
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        if descriptor < 0 { throw Files.error(path, "cannot open journal") }
        let size = Int(lseek(descriptor, 0, SEEK_END))
        if size > reader.tailOffset {
            if ftruncate(descriptor, off_t(reader.tailOffset)) != 0 { throw Files.error(path, "cannot cut torn tail") }
        }
        segmentBytes = reader.tailOffset
        if let snapshot = reader.snapshotGeneration {
            snapshotBytes = (try? Files.read(folder.snapshotPath(snapshot)))??.count ?? 0
        }
        Files.syncDirectory(folder.path)
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Appends one record with one write(2), so readers see all of it or none of it in the common case.
    func append(_ record: JournalRecord) throws(KVStoreError) {
        let frame = RecordFrame.encode(record)
        try Files.writeAll(descriptor, frame, path: folder.segmentPath(generation))
        segmentBytes += frame.count
        needsSync = true
    }

    /// Makes every appended record durable.
    func sync() throws(KVStoreError) {
        guard needsSync else { return }
        if fsync(descriptor) != 0 { throw Files.error(folder.segmentPath(generation), "cannot fsync journal") }
        needsSync = false
    }

    /// Whether the segment has grown enough, next to the snapshot, to be worth compacting.
    var shouldCompact: Bool { segmentBytes > max(compactionFloor, 2 * snapshotBytes) }

    /// Whether the segment being appended to is still in the folder (someone
    /// may have deleted the folder, or a synchronizer propagated a deletion).
    var isInPlace: Bool { access(folder.segmentPath(generation), F_OK) == 0 }

    /// Replaces the journal by a snapshot of `current` (this device's records
    /// still in force) and starts a new segment; then removes what the snapshot stands for.
    func compact(_ current: [JournalRecord], stamp: Stamp) throws(KVStoreError) {
        let next = generation + 1
        try Files.makeDirectory(folder.path)
        var bytes: [UInt8] = []
        for record in current { bytes += RecordFrame.encode(record) }
        bytes += RecordFrame.encode(JournalRecord(stamp: stamp, operation: .snapshotEnd(count: UInt32(current.count))))
        try Files.writeAtomically(folder.snapshotPath(next), bytes)
        let path = folder.segmentPath(next)
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        if fd < 0 { throw Files.error(path, "cannot create journal segment") }
        Files.syncDirectory(folder.path)
        close(descriptor)
        descriptor = fd
        generation = next
        segmentBytes = 0
        snapshotBytes = bytes.count
        needsSync = false
        let listing = folder.listing()
        for old in listing.snapshots where old < next { unlink(folder.snapshotPath(old)) }
        for old in listing.segments where old < next { unlink(folder.segmentPath(old)) }
    }
}
