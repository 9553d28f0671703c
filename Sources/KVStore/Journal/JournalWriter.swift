import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Appends this device's records to its folder, and compacts them.
///
/// A record is in the file (the kernel's page cache) when `append` returns, so
/// killing the process loses nothing appended; `sync` makes it durable on disk.
///
/// Every file is opened relative to the folder's descriptor and never
/// through a link (see ``Folder``); the folder itself must be a real folder.
/// Before each append and compaction the writer checks that no other process
/// has claimed the folder since (``WriterClaim``).
final class JournalWriter {
    let folder: DeviceFolder
    /// The folder as opened for the current segment; nil for a writer that refuses writes.
    private var handle: Folder?
    private let claim: WriterClaim?
    private var descriptor: Int32 = -1
    private(set) var generation: UInt64
    /// Bytes in the current segment: what compaction weighs against the snapshot.
    private(set) var segmentBytes = 0
    private(set) var snapshotBytes = 0
    private(set) var needsSync = false

    /// Segment size under which compaction is not worth it (tests lower it).
    var compactionFloor = 1 << 20

    /// Opens the folder for appending (creating it), claims it for this
    /// process, after `reader` has recovered what it holds: a torn or corrupt
    /// tail of the last segment is cut off so appends continue cleanly.
    init(folder: DeviceFolder, recoveredBy reader: DeviceFolderReader, claim: WriterClaim) throws(KVStoreError) {
        self.folder = folder
        self.claim = claim
        generation = reader.segmentGeneration
        let handle = try Self.open(folder)
        self.handle = handle
        descriptor = try handle.openForAppending(DeviceFolder.segmentName(generation))
        let size = Int(lseek(descriptor, 0, SEEK_END))
        if size > reader.tailOffset {
            if ftruncate(descriptor, off_t(reader.tailOffset)) != 0 {
                throw Files.error(folder.segmentPath(generation), "cannot cut torn tail")
            }
        }
        segmentBytes = reader.tailOffset
        if let snapshot = reader.snapshotGeneration {
            snapshotBytes = (try? handle.read(DeviceFolder.snapshotName(snapshot)))?.count ?? 0
        }
        try claim.claim(in: handle)
        handle.sync()
    }

    /// A writer for a store opened read-only: it refuses every write, so
    /// nothing can reach the folder.
    init(refusingWritesTo folder: DeviceFolder) {
        self.folder = folder
        claim = nil
        generation = 1
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// A writer of another folder (the sync directory now holds another
    /// store) for the same process: with the same claim, or refusing writes as this one does.
    func reopened(on folder: DeviceFolder, recoveredBy reader: DeviceFolderReader) throws(KVStoreError) -> JournalWriter {
        guard let claim else { return JournalWriter(refusingWritesTo: folder) }
        return try JournalWriter(folder: folder, recoveredBy: reader, claim: claim)
    }

    /// Appends one record with one write(2), so readers see all of it or none of it in the common case.
    /// A write that fails part way (a full disk) is cut off again, so the
    /// journal never keeps half a record for later appends to follow.
    func append(_ record: JournalRecord) throws(KVStoreError) {
        let handle = try writableHandle()
        try claim?.confirm(in: handle)
        let frame = RecordFrame.encode(record)
        do {
            try Files.writeAll(descriptor, frame, path: folder.segmentPath(generation))
        } catch {
            _ = ftruncate(descriptor, off_t(segmentBytes))
            throw error
        }
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
    /// A writer that refuses writes has nothing to put back.
    var isInPlace: Bool {
        guard handle != nil else { return true }
        let current = (try? folder.open()) ?? nil
        return current?.entry(DeviceFolder.segmentName(generation)).map { $0.st_mode & S_IFMT == S_IFREG } ?? false
    }

    /// Whether another process has claimed this device's folder, so this one writes no more.
    var isDisplaced: Bool { claim?.displacement != nil }

    /// Replaces the journal by a snapshot of `current` (this device's records
    /// still in force) and starts a new segment; then removes what the snapshot stands for.
    func compact(_ current: [JournalRecord], stamp: Stamp) throws(KVStoreError) {
        _ = try writableHandle()
        // Opened afresh: the folder may have been removed, and is then made again.
        let handle = try Self.open(folder)
        try claim?.confirm(in: handle)
        let next = generation + 1
        var bytes: [UInt8] = []
        for record in current { bytes += RecordFrame.encode(record) }
        bytes += RecordFrame.encode(JournalRecord(stamp: stamp, operation: .snapshotEnd(count: UInt32(current.count))))
        try handle.writeAtomically(DeviceFolder.snapshotName(next), bytes)
        let fd = try handle.openForAppending(DeviceFolder.segmentName(next))
        handle.sync()
        close(descriptor)
        descriptor = fd
        self.handle = handle
        generation = next
        segmentBytes = 0
        snapshotBytes = bytes.count
        needsSync = false
        let listing = folder.listing()
        for old in listing.snapshots where old < next { handle.remove(DeviceFolder.snapshotName(old)) }
        for old in listing.segments where old < next { handle.remove(DeviceFolder.segmentName(old)) }
    }

    /// The device folder, created if missing; a link in its place is refused.
    private static func open(_ folder: DeviceFolder) throws(KVStoreError) -> Folder {
        guard let handle = try folder.open(create: true) else { throw .readOnly(path: folder.path) }
        return handle
    }

    private func writableHandle() throws(KVStoreError) -> Folder {
        guard let handle else { throw .readOnly(path: folder.path) }
        return handle
    }
}
