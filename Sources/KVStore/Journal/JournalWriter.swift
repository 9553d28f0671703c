import Foundation
import LinuxSystem
import SystemPackage

/// Appends this device's records to its folder, and compacts them.
///
/// A record is in the file (the kernel's page cache) when `append` returns, so
/// killing the process loses nothing appended; `sync` makes it durable on disk.
/// Segments are written through a ``JournalFile``, which `files` opens.
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
    private let files: any JournalFileOpener
    /// The segment appended to; nil for a writer that refuses writes.
    private var segment: (any JournalFile)?
    private(set) var generation: UInt64
    /// Bytes in the current segment: what compaction weighs against the snapshot.
    private(set) var segmentBytes = 0
    /// What the current segment's records would take plain: ``segmentBytes`` in a plain store; in a
    /// sealed one, what its records take before they are padded and sealed, marks none. The floor
    /// counts these, so a sealed segment, whose padded records take up to three times the bytes, is
    /// compacted as often as a plain one. Another process's appends, and the segment found at open,
    /// count as their file's bytes.
    private(set) var segmentPlainBytes = 0
    private(set) var snapshotBytes = 0
    /// Records appended, and how many of them an fsync has made durable.
    private var appended: UInt64 = 0
    private var synced: UInt64 = 0
    /// The segment this process left for another process's new one, with
    /// how many records it had appended by then, until they are durable.
    private var retired: (segment: (any JournalFile)?, appended: UInt64)?
    /// Whether some appended record is not durable yet.
    var needsSync: Bool { appended > synced }
    /// In a sealed store, the current segment's chain up to its end (nil in a plain store).
    private(set) var chain: RecordChain?
    /// In a sealed store, the cipher context each append seals its records with (a mark seals none).
    private lazy var cipher = RecordCipher.Context()

    /// Segment size, counted in its records' plain bytes (``segmentPlainBytes``), under which compaction
    /// is not worth it (tests lower it).
    var compactionFloor = 1 << 20

    /// Opens the folder for appending (creating it), claims it for this
    /// process, after `reader` has recovered what it holds: a torn or corrupt
    /// tail of the last segment is cut off so appends continue cleanly.
    /// Its segments are opened by `files`.
    init(folder: DeviceFolder, recoveredBy reader: DeviceFolderReader, claim: WriterClaim,
         files: any JournalFileOpener) throws(KVStoreError) {
        self.folder = folder
        self.claim = claim
        self.files = files
        generation = reader.segmentGeneration
        let handle = try Self.open(folder)
        self.handle = handle
        let segment = try files.openForAppending(DeviceFolder.segmentName(generation), in: handle)
        self.segment = segment
        do throws(SystemCallError) {
            if try segment.size() > reader.tailOffset { try segment.truncate(to: reader.tailOffset) }
        } catch {
            throw KVStoreError(error, path: folder.segmentPath(generation), doing: "cannot cut torn tail")
        }
        segmentBytes = reader.tailOffset
        segmentPlainBytes = reader.tailOffset
        chain = reader.tailChain
        if let snapshot = reader.snapshotGeneration {
            snapshotBytes = handle.entry(DeviceFolder.snapshotName(snapshot)).map { Int($0.size) } ?? 0
        }
        handle.removeStaleTemporaries()
        try claim.claim(in: handle, of: folder)
        handle.sync()
        try? sign()  // a process of this device stopped before its mark: its records are signed now (or at the next mark)
    }

    /// A writer for a store opened read-only: it refuses every write, so
    /// nothing can reach the folder.
    init(refusingWritesTo folder: DeviceFolder) {
        self.folder = folder
        claim = nil
        files = DiskJournalFiles()
        generation = 1
    }

    /// A writer of another folder (the sync directory now holds another
    /// store) for the same process: with the same claim and files, or refusing writes as this one does.
    func reopened(on folder: DeviceFolder, recoveredBy reader: DeviceFolderReader) throws(KVStoreError) -> JournalWriter {
        guard let claim else { return JournalWriter(refusingWritesTo: folder) }
        return try JournalWriter(folder: folder, recoveredBy: reader, claim: claim, files: files)
    }

    /// Appends records with one write(2). What must be seen whole is one
    /// record (a rename; an import's batch, ``JournalRecord/Operation/batch(puts:)``):
    /// a reader, or a crash, may cut between records, never inside one
    /// unseen. A write that fails part way (a full disk) is cut off again, so the
    /// journal never keeps half a record for later appends to follow. Returns where each record went (its frame's length is its size).
    @discardableResult
    func append(_ records: [JournalRecord]) throws(KVStoreError) -> [RecordLocation] {
        let handle = try writableHandle()
        try claim?.confirm(in: handle)
        let chainBefore = chain
        let frames = frames(of: records)
        guard let segment else { throw .readOnly(path: folder.path) }
        do throws(SystemCallError) {
            try segment.append(frames.bytes)
        } catch {
            try? segment.truncate(to: segmentBytes)
            chain = chainBefore
            throw KVStoreError(error, path: folder.segmentPath(generation), doing: "cannot write")
        }
        var offset = segmentBytes
        let locations = frames.ends.map { end in
            defer { offset = segmentBytes + end }
            return RecordLocation(generation: generation, inSnapshot: false, offset: offset, length: segmentBytes + end - offset)
        }
        segmentBytes += frames.bytes.count
        segmentPlainBytes += frames.plainBytes
        appended += UInt64(records.count)
        return locations
    }

    /// The frames of `records` one after the other in one buffer, where
    /// each ends in it, and the bytes their plain frames take: plain, or in a sealed store sealed as the segment's
    /// next records, unsigned (a mark signs them at the process's next sync point: ``sign()``, docs/sealed.md
    /// § Signing at sync points) unless `signingLast`.
    private func frames(of records: [JournalRecord], signingLast: Bool = false) -> (bytes: [UInt8], ends: [Int], plainBytes: Int) {
        var writer = ByteWriter(capacity: records.reduce(0) { $0 + RecordFrame.headerSize + RecordCodec.capacity(for: $1) })
        var ends: [Int] = []
        ends.reserveCapacity(records.count)
        if let keys = folder.sealing?.keys, let chain {
            var sealer = RecordSealer(keys: keys, chain: chain, cipher: cipher)
            defer { self.chain = sealer.chain }
            var plainBytes = 0
            for (index, record) in records.enumerated() {
                plainBytes += sealer.frame(record, signed: signingLast && index == records.count - 1, into: &writer)
                ends.append(writer.bytes.count)
            }
            return (writer.bytes, ends, plainBytes)
        }
        for record in records {
            RecordFrame.append(record, to: &writer)
            ends.append(writer.bytes.count)
        }
        return (writer.bytes, ends, writer.bytes.count)
    }

    /// In a sealed store, whether the segment ends with records no signature covers yet
    /// (the device's appends since its last mark: ``sign()``).
    var hasUnsignedTail: Bool { chain.map { !$0.isSigned } ?? false }

    /// In a sealed store, appends a mark (docs/sealed.md § Signing at sync points) when the segment ends
    /// with unsigned records: its signature vouches for them, and other devices read them once it is
    /// there. One write(2); one that fails is cut off again, and the records wait for the next mark.
    func sign() throws(KVStoreError) {
        guard let keys = folder.sealing?.keys, let chain, !chain.isSigned, let segment, let handle else { return }
        try claim?.confirm(in: handle)
        var sealer = RecordSealer(keys: keys, chain: chain, cipher: cipher)
        var writer = ByteWriter(capacity: RecordFrame.headerSize + SealedRecord.markSize)
        sealer.mark(into: &writer)
        do throws(SystemCallError) {
            try segment.append(writer.bytes)
        } catch {
            try? segment.truncate(to: segmentBytes)
            throw KVStoreError(error, path: folder.segmentPath(generation), doing: "cannot write")
        }
        segmentBytes += writer.bytes.count
        appended += 1  // made durable with the records
        self.chain = sealer.chain
    }

    // MARK: Other processes of this device

    /// Whether the folder holds nothing that `reader` (this folder's own
    /// reader) has not read: no other process of this device appended or
    /// compacted since. Two `fstatat`s, so that a process appending alone
    /// does not read its folder again before each append. A compaction makes
    /// the next segment first, and removes this one only after; so while this
    /// one is there, with the length read, and the next is not, nothing is new.
    func holdsNothingNew(past reader: DeviceFolderReader) -> Bool {
        guard let handle, reader.segmentGeneration == generation,
              let current = handle.entry(DeviceFolder.segmentName(generation)), Int(current.size) == reader.tailOffset else { return false }
        return handle.lacks(DeviceFolder.segmentName(generation + 1))
    }

    /// Appends from where `reader`, this folder's own reader, has read to
    /// (under the journal's lock, once it has read what the device's other
    /// processes wrote): in the segment it follows, if another process
    /// compacted, and after its last whole record, cutting off a torn tail (a
    /// process killed in the middle of an append) before it is appended to.
    func follow(_ reader: DeviceFolderReader) throws(KVStoreError) {
        let handle = try writableHandle()
        guard reader.segmentGeneration >= generation else {
            throw .io(path: folder.segmentPath(generation), reason: "cannot read this device's journal to its end before appending to it")
        }
        let followed = reader.segmentGeneration != generation
        if followed {
            let next = try files.openForAppending(DeviceFolder.segmentName(reader.segmentGeneration), in: handle)
            // This process's appends to the segment it leaves are made durable with the next sync point's.
            if needsSync { retired = (segment, appended) }
            segment = next
            generation = reader.segmentGeneration
            snapshotBytes = reader.snapshotGeneration.flatMap { handle.entry(DeviceFolder.snapshotName($0)) }.map { Int($0.size) } ?? 0
        }
        guard let segment else { throw .readOnly(path: folder.path) }
        do throws(SystemCallError) {
            if try segment.size() > reader.tailOffset { try segment.truncate(to: reader.tailOffset) }
        } catch {
            throw KVStoreError(error, path: folder.segmentPath(generation), doing: "cannot cut torn tail")
        }
        // This process's own appends keep their plain count; the other processes' count as their bytes.
        segmentPlainBytes = followed ? reader.tailOffset : min(reader.tailOffset, segmentPlainBytes + max(0, reader.tailOffset - segmentBytes))
        segmentBytes = reader.tailOffset
        chain = reader.tailChain
    }

    /// Makes every appended record durable, here and now.
    func sync() throws(KVStoreError) {
        guard let point = try syncPoint() else { return }
        try point.perform()
        didSync(point)
    }

    /// One fsync of the journal, taken under the store's lock and performed
    /// without it: the disk may take tens of milliseconds, and reads and
    /// writes must not wait for it.
    struct SyncPoint: Sendable {
        /// The segments, held open: a compaction may move the writer to the next one meanwhile.
        fileprivate let segments: [any JournalFile]
        fileprivate let path: String
        fileprivate let appended: UInt64

        /// fsync(2), of each segment.
        func perform() throws(KVStoreError) {
            do throws(SystemCallError) {
                for segment in segments { try segment.sync() }
            } catch {
                throw KVStoreError(error, path: path, doing: "cannot fsync journal")
            }
        }
    }

    /// The fsync that makes every record appended so far durable, or nil when they are.
    func syncPoint() throws(KVStoreError) -> SyncPoint? {
        guard needsSync, let segment else { return nil }
        return SyncPoint(segments: [retired?.segment, segment].compactMap { $0 }, path: folder.segmentPath(generation), appended: appended)
    }

    /// Records that a sync point's fsync succeeded.
    func didSync(_ point: SyncPoint) {
        synced = max(synced, point.appended)
        if let retired, synced >= retired.appended { self.retired = nil }
    }

    /// Whether the segment has grown enough, next to the snapshot, to be worth compacting: past the floor
    /// in its records' plain bytes, and past twice the snapshot in the bytes of both (padded alike, sealed).
    var shouldCompact: Bool { segmentPlainBytes > compactionFloor && segmentBytes > 2 * snapshotBytes }

    /// Whether the segment being appended to is still in the folder (someone
    /// may have deleted the folder, or a synchronizer propagated a deletion),
    /// or a later one: another process of this device compacted, and this
    /// one follows it at its next append (``follow(_:)``). A writer that
    /// refuses writes has nothing to put back.
    var isInPlace: Bool {
        guard handle != nil else { return true }
        guard let current = (try? folder.open()) ?? nil else { return false }
        if current.entry(DeviceFolder.segmentName(generation))?.type == .regular { return true }
        return folder.listing().segments.contains { $0 > generation }
    }

    /// Whether another process has claimed this device's folder, so this one writes no more.
    var isDisplaced: Bool { claim?.displacement != nil }

    /// Why this process writes no more (another took the folder, or the store was sealed and this device
    /// is no member), or nil while it writes.
    var stoppedBecause: KVStoreError? { claim?.displacement }

    /// Writes no more, for `reason`; false when it had stopped already (``WriterClaim/stop(_:)``).
    func stop(_ reason: KVStoreError) -> Bool { claim?.stop(reason) ?? false }

    /// Starts replacing the journal by a snapshot of `current` (this
    /// device's records still in force, ending with `stamp`) and of the
    /// records `copied` from the folders' files (history's older versions,
    /// whose values are not in memory): appends go to a new segment from now
    /// on, and the returned ``Compaction`` reads the copies, writes the
    /// snapshot and removes what it stands for, without the store's lock.
    ///
    /// The new segment exists before its snapshot, so at every moment the
    /// folder holds every record: until the snapshot is whole, the old
    /// snapshot and segment still stand beside the new segment; once it is,
    /// the old files go. The old segment ends with a close mark
    /// (``closeSegment(with:)``), so readers follow the new segment at once,
    /// before its snapshot is there (and this device's own reader at a
    /// restart, when the snapshot could not be written: see ``resnapshot(_:copying:stamp:replacing:)``).
    func beginCompaction(_ current: [JournalRecord], copying copied: [StoredRecord] = [], stamp: Stamp) throws(KVStoreError) -> Compaction {
        _ = try writableHandle()
        // Opened afresh: the folder may have been removed, and is then made again.
        let handle = try Self.open(folder)
        try claim?.confirm(in: handle)
        let next = generation + 1
        let file = try files.openForAppending(DeviceFolder.segmentName(next), in: handle)
        closeSegment(with: stamp)
        let compaction = Compaction(folder: folder, handle: handle, claim: claim, generation: next,
                                    contents: Compaction.Contents(records: current, copied: copied, stamp: stamp),
                                    retired: segment, retiredPath: folder.segmentPath(generation))
        segment = file
        self.handle = handle
        generation = next
        segmentBytes = 0
        segmentPlainBytes = 0
        chain = folder.sealing.map { RecordChain(storeID: $0.keys.storeID, device: $0.keys.device, file: SealedFile(kind: .segment, generation: next)) }
        snapshotBytes = compaction.contents.estimatedSize
        synced = appended  // what the old segment holds, the compaction makes durable
        retired = nil
        return compaction
    }

    /// Ends the segment with a snapshot end (its close mark), once the next
    /// one is there: readers go on into the next before its snapshot is
    /// written, so that a compaction, however slow, delays no one's reads of
    /// the writes made meanwhile. A mark that cannot be written (a full disk)
    /// is cut off again, and readers then wait for the snapshot instead; older
    /// versions of kvfs read the mark as a record that changes nothing.
    private func closeSegment(with stamp: Stamp) {
        guard let segment else { return }
        do throws(SystemCallError) {
            // Sealed and signed in a sealed store: a sync point, vouching for the segment's unsigned records.
            let mark = frames(of: [JournalRecord(stamp: stamp, operation: .snapshotEnd(count: 0))], signingLast: true).bytes
            try segment.append(mark)
            segmentBytes += mark.count
            appended += 1
        } catch {
            try? segment.truncate(to: segmentBytes)
        }
    }

    /// A compaction in place of `unfinished`, whose snapshot could not be
    /// written: a snapshot of `current` (what the folder holds now) for the
    /// segment being appended to, which stays. Records that segment holds
    /// already are then in both, which readers take as one.
    func resnapshot(_ current: [JournalRecord], copying copied: [StoredRecord] = [], stamp: Stamp,
                    replacing unfinished: Compaction) throws(KVStoreError) -> Compaction {
        let handle = try writableHandle()
        try claim?.confirm(in: handle)
        let (retired, retiredPath) = unfinished.handOverRetired()
        return Compaction(folder: folder, handle: handle, claim: claim, generation: generation,
                          contents: Compaction.Contents(records: current, copied: copied, stamp: stamp),
                          retired: retired, retiredPath: retiredPath)
    }

    /// The part of a compaction done without the store's lock: the retired
    /// segment's last appends made durable, the copied records read, the
    /// snapshot written atomically, then the older files removed. Run one at
    /// a time; one whose snapshot could not be written (a full disk) is
    /// replaced by a ``resnapshot(_:copying:stamp:replacing:)``.
    final class Compaction: @unchecked Sendable {
        // @unchecked: immutable but for `retired`; the folder and the retired segment are used by `finish` alone.
        /// The device folder it compacts.
        let folder: DeviceFolder
        private let handle: Folder
        /// Checked before the snapshot is written and before old files go: a
        /// copy of this state directory may have taken the folder meanwhile.
        private let claim: WriterClaim?
        /// The snapshot's generation.
        let generation: UInt64
        fileprivate let contents: Contents
        /// The retired segment, until its appends are durable.
        private var retired: (any JournalFile)?
        private let retiredPath: String

        /// What a snapshot holds: records in memory, records copied from the
        /// files when it is written, and its closing stamp.
        fileprivate struct Contents: Sendable {
            var records: [JournalRecord]
            var copied: [StoredRecord]
            var stamp: Stamp

            /// About the snapshot's size, before the copies are read: what compaction weighs the next segment against.
            var estimatedSize: Int {
                records.reduce(0) { $0 + RecordFrame.encode($1).count } + copied.reduce(0) { $0 + $1.location.length }
            }

            /// Writes snapshot `generation` into `file` (its records sorted
            /// by stamp and key, then its closing record) a piece at a time,
            /// and returns where each record lies in it: a full history makes
            /// a snapshot of megabytes, which built whole in one growing
            /// array took three times its size in memory at its peak. A copy
            /// whose file is gone is left out: a version of history, never a
            /// current value, which is always in memory.
            /// In a sealed store (`sealing`), every record is sealed.
            func write(to file: FileDescriptor, generation: UInt64, sealing: SealingKeys?) throws(SystemCallError) -> [(JournalRecord, RecordLocation)] {
                var files = RecordFiles(window: RecordFiles.window)
                let all = (records + copied.sorted { $0.precedesInFile($1) }.compactMap { $0.read(from: &files) }).sorted {
                    $0.stamp != $1.stamp ? $0.stamp < $1.stamp
                        : ($0.changes.first?.key ?? "") < ($1.changes.first?.key ?? "")
                }
                var pending = ByteWriter(capacity: JournalWriter.snapshotWriteSize)
                var offset = 0
                var located: [(JournalRecord, RecordLocation)] = []
                located.reserveCapacity(all.count)
                // Sealed, a snapshot's records are chained, and its end alone is signed: it vouches for them all.
                var sealer = sealing.map { RecordSealer(keys: $0, file: SealedFile(kind: .snapshot, generation: generation)) }
                func add(_ record: JournalRecord, signed: Bool) -> Int {
                    let start = pending.bytes.count
                    if sealer != nil { sealer!.frame(record, signed: signed, into: &pending) } else { RecordFrame.append(record, to: &pending) }
                    return pending.bytes.count - start
                }
                for record in all {
                    let length = add(record, signed: false)
                    located.append((record, RecordLocation(generation: generation, inSnapshot: true, offset: offset, length: length)))
                    offset += length
                    if pending.bytes.count >= JournalWriter.snapshotWriteSize {
                        try file.write(all: pending.bytes)
                        pending.bytes.removeAll(keepingCapacity: true)
                    }
                }
                _ = add(JournalRecord(stamp: stamp, operation: .snapshotEnd(count: UInt32(all.count))), signed: true)
                try file.write(all: pending.bytes)
                return located
            }
        }

        fileprivate init(folder: DeviceFolder, handle: Folder, claim: WriterClaim?, generation: UInt64, contents: Contents,
                         retired: (any JournalFile)?, retiredPath: String) {
            self.folder = folder
            self.handle = handle
            self.claim = claim
            self.generation = generation
            self.contents = contents
            self.retired = retired
            self.retiredPath = retiredPath
        }

        /// The retired segment, not yet made durable, for the compaction that replaces this one.
        fileprivate func handOverRetired() -> ((any JournalFile)?, String) {
            defer { retired = nil }
            return (retired, retiredPath)
        }

        /// Writes the snapshot and removes the files it stands for; returns
        /// its records and where each lies in it (for history).
        func finish() throws(KVStoreError) -> [(JournalRecord, RecordLocation)] {
            if let retired {
                do throws(SystemCallError) {
                    try retired.sync()
                } catch {
                    throw KVStoreError(error, path: retiredPath, doing: "cannot fsync journal")
                }
                self.retired = nil
            }
            try claim?.confirm(in: handle)
            var located: [(JournalRecord, RecordLocation)] = []
            try handle.writeAtomically(DeviceFolder.snapshotName(generation)) { file throws(SystemCallError) in
                located = try contents.write(to: file, generation: generation, sealing: folder.sealing?.keys)
            }
            handle.sync()
            try claim?.confirm(in: handle)
            let listing = folder.listing()
            for old in listing.snapshots where old < generation { handle.remove(DeviceFolder.snapshotName(old)) }
            for old in listing.segments where old < generation { handle.remove(DeviceFolder.segmentName(old)) }
            return located
        }
    }

    /// Bytes of a snapshot written to its file at a time (``Compaction``).
    static let snapshotWriteSize = 256 << 10

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
