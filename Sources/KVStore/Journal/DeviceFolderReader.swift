import Foundation
import Synchronization

/// Follows one device's folder, handing out its records as they appear.
///
/// Tolerates what a shared or synchronized folder does: files that vanish
/// between listing and reading (the owner compacted), tails still being
/// appended or copied (read again later), holes still being filled (read
/// again from the hole), half-copied snapshots (an older whole one serves
/// meanwhile), corrupt records and, in a journal segment, records stamped by
/// another device (skipped with a warning), and files that are not regular
/// files (skipped). A snapshot may hold records stamped by other devices: the
/// ones its device adopted from a retired or vanished device.
///
/// It also knows how far it has read the device without a gap
/// (``contiguous``), which the device's progress file publishes for
/// tombstone collection.
final class DeviceFolderReader {
    /// What one read found.
    struct Batch {
        /// Whether `records` replace all the device's records read before
        /// (they start with a snapshot), rather than add to them.
        var replacesAll = false
        /// The records, in file order.
        var records: [JournalRecord] = []
        /// Where each of `records` lies in the folder (for history, which reads values back on demand).
        var locations: [RecordLocation] = []
        /// The latest stamp seen, the snapshot's closing one included: the clock moves past it.
        var latest: HLCTimestamp?
    }

    let device: DeviceID
    let folder: DeviceFolder
    /// Where a segment is being read.
    struct Position {
        /// The segment.
        var generation: UInt64
        /// Where to read it next, and where its whole frames end.
        var offset: Int, tailOffset: Int
        /// Whether reading started from a known beginning (a snapshot, or the
        /// first segment) and has had no gap since.
        var inOrder: Bool
        /// In a sealed folder, the segment's chain up to `offset` (nil at its start: its origin).
        var chain: RecordChain? = nil
        /// Whether the last record read of the segment closes it (a snapshot
        /// end in a segment, written as its device began a compaction): the
        /// segment after it continues the journal, before its snapshot is there.
        var closed = false
    }

    /// The snapshot generation read, or nil before any.
    private(set) var snapshotGeneration: UInt64?
    /// The snapshot this process's compaction is writing (``writing(snapshot:)``), not read when it appears.
    private(set) var snapshotBeingWritten: UInt64?
    /// The segment being followed.
    private var position = Position(generation: 1, offset: 0, tailOffset: 0, inOrder: true)
    /// Where it was in the segment it left for a later one whose snapshot has
    /// not arrived: it goes back there should the later one vanish.
    private var left: Position?
    var segmentGeneration: UInt64 { position.generation }
    var tailOffset: Int { position.tailOffset }
    /// Every record of the device stamped up to this has been read (or was
    /// dropped by its owner); nil before any.
    private(set) var contiguous: HLCTimestamp?
    /// The latest stamp read from the folder.
    private(set) var newest: HLCTimestamp?
    /// How many records its reads have returned: of this device's own
    /// folder, only what the device's other processes wrote (OwnAppendsTests
    /// counts them), this process's own never.
    private(set) var recordsRead = 0
    /// In a sealed folder: the stamps of its device's records read, by the epoch each was sealed under.
    private(set) var sealedUnder = SealedEpochs()
    /// The problems of the last read, and the warnings said.
    private var report: ReaderReport
    /// What keeps the last read from reading everything the folder holds.
    var problems: [SyncWarning] { report.problems }
    /// Whether this is the reading device's own folder (``init(device:folder:ownFolder:warn:)``): it reads
    /// on into later segments that no snapshot introduces, and takes the device's own unsigned records.
    private let isOwnFolder: Bool
    /// Whether it read on into such a segment: a compaction of this device's
    /// own was left unfinished (its snapshot could not be written).
    private(set) var foundUnfinishedCompaction = false
    /// Why the sealed folder holds less than this device had read of it before it last stopped (its mark), while
    /// the folder holds anything at all; nil when it does not (``wentBackPastMark(_:)``).
    private(set) var wentBackWhileAway: String?
    /// The folder as a survey saw it just before the last read
    /// (``FolderSurvey``): while it still looks so, a read finds nothing new.
    var readAt: FolderSurvey.Fingerprint?
    /// The files whose last read stopped at a problem that only a change of
    /// the file clears (a snapshot not whole, bytes in a segment that are not
    /// whole records, a file it cannot read), with their status then: while
    /// it stays the same, the file is not read again, and its problems stand
    /// (``ProblemFile``). An idle daemon re-read a corrupt 45 MB snapshot
    /// every second (35 s of CPU in 7.5 minutes) at 0b953bb.
    private var problemFiles: [String: ProblemFile] = [:]

    /// A file whose read stopped at a problem, as it was then.
    private struct ProblemFile {
        /// Its status before that read (which file, size, times).
        var stamp: FolderSurvey.FileStamp
        /// What that read found wrong with it.
        var problems: [SyncWarning]
        /// Whether it could be read at all.
        var readable: Bool
    }

    /// - Parameter ownFolder: whether this is the folder of the device
    ///   reading it, read once as its store opens. A later segment with no
    ///   snapshot of its own is then what a compaction whose snapshot could
    ///   not be written (a full disk) left, and the device's own writes since
    ///   are in it: it is read too. In another device's folder such a
    ///   segment is not followed while the earlier one is there (it may be a
    ///   stray copy); that device finishes its compaction first. And the
    ///   device's own unsigned records, which its other processes appended
    ///   and have not signed yet, are read (their nonces are the device's:
    ///   ``SealedFileOpener``); another's unsigned record there is refused.
    init(device: DeviceID, folder: DeviceFolder, ownFolder: Bool = false, warn: @escaping (String) -> Void) {
        self.device = device
        self.folder = folder
        report = ReaderReport(device: device, warn: warn)
        isOwnFolder = ownFolder
    }

    /// The records that appeared since the last call, however many: each
    /// file is read to its end a window at a time (``DeviceFolder/scanFrames(_:from:)``),
    /// never cut at a size its writer does not know.
    ///
    /// It follows one segment, and moves to a later one only once that
    /// segment is gone (its owner compacted; the new snapshot, which stands
    /// for what our copy of the old segment lacked, has not arrived whole
    /// yet) or a newer whole snapshot says where to go. So a stray later
    /// segment (a copy under a wrong name, a synchronizer's leftover) is
    /// never followed while the real one is there; and should the segment it
    /// moved to vanish while the one it left is back, it goes back to where
    /// it was.
    func readNew() -> Batch {
        let listing = folder.listing()
        var batch = Batch()
        report.startRead()
        if let wentBack = wentBackPastMark(listing) {
            refuse(.rolledBack(wentBack), in: folder.path, at: 0)
            if !(listing.segments + listing.snapshots).isEmpty { wentBackWhileAway = wentBack }
            return batch
        }
        readNewestSnapshot(listing.snapshots, into: &batch)
        var wentBack = false
        while !readSegment(into: &batch) {  // gone, or not a file it can read
            if let next = listing.segments.first(where: { $0 > segmentGeneration }) {
                if left == nil { left = position }
                position = Position(generation: next, offset: 0, tailOffset: 0, inOrder: false)
            } else if !wentBack, let back = left, listing.segments.contains(back.generation) {
                report.warn("\(folder.segmentPath(segmentGeneration)) vanished; reading \(DeviceFolder.segmentName(back.generation)) again from where it was left")
                (position, left, wentBack) = (back, nil, true)
            } else {
                break
            }
        }
        // A closed segment goes on in the next, which its device began as it compacted: followed before the
        // compaction's snapshot is there, so that a slow compaction delays no one's reads of the writes since.
        while position.closed, listing.segments.contains(segmentGeneration + 1) {
            if left == nil { left = position }
            position = Position(generation: segmentGeneration + 1, offset: 0, tailOffset: 0, inOrder: position.inOrder)
            if isOwnFolder && !listing.snapshots.contains(segmentGeneration) { foundUnfinishedCompaction = true }
            guard readSegment(into: &batch) else { break }
        }
        if folder.sealing != nil, let newestFile = (listing.segments + listing.snapshots).max(), newestFile < segmentGeneration {
            refuse(.rolledBack("its newest file is generation \(newestFile), generation \(segmentGeneration) was read already"),
                   in: folder.path, at: 0)
        }
        while isOwnFolder, let next = listing.segments.first(where: { $0 > segmentGeneration }) {
            position = Position(generation: next, offset: 0, tailOffset: 0, inOrder: position.inOrder)
            foundUnfinishedCompaction = true
            guard readSegment(into: &batch) else { break }
        }
        if let stray = listing.segments.first(where: { $0 > segmentGeneration }), listing.segments.contains(segmentGeneration) {
            report.noteAndWarn(.outOfOrder, file: folder.segmentPath(stray), message: """
                \(folder.segmentPath(stray)) is ahead of \(DeviceFolder.segmentName(segmentGeneration)), which is still \
                there, with no snapshot between: kvfs keeps reading \(DeviceFolder.segmentName(segmentGeneration))
                """, fix: "if the device did not write it (a stray copy, a synchronizer's leftover), delete it")
        }
        for record in batch.records { newest = max(newest ?? record.stamp.time, record.stamp.time) }
        if let latest = batch.latest { newest = max(newest ?? latest, latest) }
        recordsRead += batch.records.count
        return batch
    }

    /// Goes on from the end of what this process has just written to its
    /// own folder, `writer`'s, stamped up to `latest`: records appended, which
    /// it merged already, or a compaction begun (the segment it read to its
    /// end closed, the next one begun). So it reads only what the device's
    /// other processes write, never this process's own writes back. (Unless a
    /// region before them is unsettled: then the next read starts there
    /// again, and merging them twice changes nothing.) In a sealed folder it
    /// takes the writer's chain with its offset.
    func follow(_ writer: JournalWriter, latest: HLCTimestamp) {
        let settled = position.offset == position.tailOffset
        newest = max(newest ?? latest, latest)
        if writer.generation > position.generation {
            position = Position(generation: writer.generation, offset: writer.segmentBytes, tailOffset: writer.segmentBytes,
                                inOrder: position.inOrder && settled, chain: writer.chain)
            left = nil
        } else if writer.generation == position.generation {
            position.tailOffset = max(position.tailOffset, writer.segmentBytes)
            if settled {
                position.offset = position.tailOffset
                position.chain = writer.chain
            }
        } else {
            return
        }
        if position.inOrder && position.offset == position.tailOffset { contiguous = max(contiguous ?? latest, latest) }
    }

    /// Takes the newest whole snapshot newer than the one read, if any.
    private func readNewestSnapshot(_ generations: [UInt64], into batch: inout Batch) {
        for generation in generations.reversed() where generation > (snapshotGeneration ?? 0) && generation != snapshotBeingWritten {
            let path = folder.snapshotPath(generation)
            if unchangedProblem(path) != nil { continue }
            let (stamp, problemsBefore) = (status(of: path), report.problems.count)
            guard let (records, locations, end) = readSnapshot(generation) else {
                rememberProblem(path, stamp: stamp, since: problemsBefore, readable: true)
                continue
            }
            batch = Batch(replacesAll: true, records: records, locations: locations, latest: end)
            snapshotGeneration = generation
            position = Position(generation: generation, offset: 0, tailOffset: 0, inOrder: true)
            left = nil
            // The snapshot stands for every record before it: read up to its end, and no further (earlier
            // files may have held stamps too far ahead, which the device has rewritten since: OwnRecordsAhead).
            contiguous = end
            newest = nil
            return
        }
    }

    /// Takes snapshot `generation` as read without reading it: this process
    /// wrote it (its own compaction, which moved this reader on into the
    /// segment it began, ``follow(_:latest:)``), and the merge and history
    /// hold what it keeps already. Read again, a snapshot with a full history
    /// is megabytes to read and decode after each compaction. A later
    /// snapshot read meanwhile is left as it is.
    func wrote(snapshot generation: UInt64) {
        if snapshotBeingWritten == generation { snapshotBeingWritten = nil }
        guard generation > (snapshotGeneration ?? 0), position.generation == generation else { return }
        snapshotGeneration = generation
        sealedUnder = SealedEpochs()  // the snapshot sealed every record before it again, under the current key
    }

    /// Notes that this process's compaction, just begun, is writing snapshot `generation`: the reader
    /// does not read it should it appear before ``wrote(snapshot:)`` says it is written. A refresh
    /// between the snapshot's rename and then (the sync watcher's, woken by the new files) read it whole
    /// again: every record and version it keeps, each opened in a sealed folder, 7 % of a sealed mount's
    /// samples over fsops.
    func writing(snapshot generation: UInt64) {
        snapshotBeingWritten = generation
    }

    /// Reads the followed segment from where it was left; false when it is
    /// gone or cannot be read.
    private func readSegment(into batch: inout Batch) -> Bool {
        let path = folder.segmentPath(segmentGeneration)
        if let known = unchangedProblem(path) { return known.readable }
        let (stamp, problemsBefore) = (status(of: path), report.problems.count)
        defer { rememberProblem(path, stamp: stamp, since: problemsBefore) }
        if folder.sealing != nil, let stamp, stamp.size < position.offset {
            refuse(.rolledBack("\(stamp.size) bytes, \(position.offset) of them read already"), in: path, at: Int(stamp.size))
            return true
        }
        let file = SealedFile(kind: .segment, generation: segmentGeneration)
        guard let scan = scan(path, from: position.offset, file: file, chain: position.chain) else { return false }
        for range in scan.skipped {
            report.noteAndWarn(.corrupt, file: path, message: "\(path): skipped \(range.count) corrupt bytes at offset \(range.lowerBound)",
                               fix: "nothing to do if the device is healthy; if it recurs, check the disk and the synchronizer")
        }
        if let range = scan.unreadable {
            report.noteAndWarn(.hole, file: path, message: "\(path): \(range.count) bytes at offset \(range.lowerBound) are not whole records (corrupt, or still arriving); reading stops there until they are",
                               fix: "wait for the synchronizer; if it stays, the copy is damaged: delete the file here and let the synchronizer copy it again")
        }
        if scan.settledOffset < scan.resumeOffset {
            report.noteAndWarn(.hole, file: path, message: """
                \(path) has bytes at offset \(scan.settledOffset) that are not whole records yet (a \
                synchronizer still filling them in?); the records after them are read, but this device counts as \
                read only up to before them
                """, fix: "wait; if it stays, the copy is damaged: delete the file here and let the synchronizer copy it again")
        }
        let fresh = stampedByDevice(scan.records.indices, of: scan, in: path)
        batch.records += fresh.map { scan.records[$0] }
        batch.locations += fresh.map { index in
            let frame = scan.frames[index]
            return RecordLocation(generation: segmentGeneration, inSnapshot: false, offset: frame.lowerBound, length: frame.count)
        }
        for index in fresh { batch.latest = max(batch.latest ?? scan.records[index].stamp.time, scan.records[index].stamp.time) }
        noteEpochs(of: scan, fresh)
        if let last = scan.records.last {
            position.closed = scan.settledCount == scan.records.count && last.stamp.device == device && last.closesSegment
        }
        if position.inOrder, let last = fresh.last(where: { $0 < scan.settledCount }) {
            contiguous = max(contiguous ?? scan.records[last].stamp.time, scan.records[last].stamp.time)
        }
        position.tailOffset = scan.resumeOffset
        position.offset = scan.settledOffset
        position.chain = scan.chain
        return true
    }

    /// Where this reader has read to: the segment it follows, and where the whole records it read there end.
    var readMark: ReadMark { ReadMark(generation: position.generation, offset: position.offset) }

    /// Why a sealed folder holds less than this device had read of it before (its mark, kept across restarts
    /// in the state directory: ``ReadMark``), while this reader has not reached that mark; nil when it holds
    /// as much. Nothing of a folder that went back is merged: it was rolled back while this device was away.
    private func wentBackPastMark(_ listing: (snapshots: [UInt64], segments: [UInt64])) -> String? {
        guard let mark = folder.sealing?.readMark(of: device), readMark < mark else { return nil }
        let newest = (listing.segments + listing.snapshots).max() ?? 0
        if newest < mark.generation {
            return "its newest file is generation \(newest); this device had read generation \(mark.generation) before"
        }
        guard newest == mark.generation, listing.segments.contains(mark.generation),
              let size = status(of: folder.segmentPath(mark.generation))?.size, size < mark.offset else { return nil }
        return "\(DeviceFolder.segmentName(mark.generation)) holds \(size) bytes; this device had read \(mark.offset) of them before"
    }

    /// In a sealed folder, the segment's chain where its whole records end:
    /// where this device's writer goes on appending (nil in a plain folder).
    var tailChain: RecordChain? {
        guard let sealing = folder.sealing else { return nil }
        return position.chain ?? RecordChain(storeID: sealing.keys.storeID, device: device,
                                              file: SealedFile(kind: .segment, generation: segmentGeneration))
    }

    /// Says that `path` of this sealed folder is refused from `offset` for
    /// `reason`: nothing from there is merged, and what was is kept.
    private func refuse(_ reason: SealRefusal, in path: String, at offset: Int) {
        report.noteAndWarn(.refused, file: path, message: "\(path): refused from offset \(offset): \(reason); nothing from there on is merged",
                           fix: "a writer without this store's keys changed the folder, or a device that is not a member wrote it: "
                               + "delete what was planted (the device's own copy comes back through the synchronizer)")
    }

    /// Notes the epochs the records at `indices` of a sealed file's `scan` were sealed under.
    private func noteEpochs(of scan: RecordFrame.Scan, _ indices: [Int]) {
        guard !scan.epochs.isEmpty else { return }
        for index in indices { sealedUnder.note(scan.epochs[index], scan.records[index].stamp.time) }
    }

    /// A whole snapshot's records, where they lie, and its closing stamp, or
    /// nil while it is incomplete or unreadable.
    private func readSnapshot(_ generation: UInt64) -> ([JournalRecord], [RecordLocation], HLCTimestamp)? {
        let path = folder.snapshotPath(generation)
        guard let scan = scan(path, from: 0, file: SealedFile(kind: .snapshot, generation: generation), chain: nil) else { return nil }
        if let refused = scan.refused {
            refuse(refused.reason, in: path, at: refused.offset)
            return nil
        }
        guard let last = scan.records.last, case let .snapshotEnd(count) = last.operation,
              Int(count) == scan.records.count - 1, scan.skipped.isEmpty, !scan.stoppedEarly else {
            report.noteAndWarn(.incompleteSnapshot, file: path, message: "\(path): incomplete or corrupt snapshot; waiting for a whole one",
                               fix: "wait for the synchronizer to finish copying it; if it stays, the copy is damaged: delete it here and let the synchronizer copy it again")
            return nil
        }
        let locations = scan.frames.dropLast().map { frame in
            RecordLocation(generation: generation, inSnapshot: true, offset: frame.lowerBound, length: frame.count)
        }
        sealedUnder = SealedEpochs()  // the snapshot stands for every record before it, sealed again when it was written
        noteEpochs(of: scan, scan.records.indices.dropLast().filter { scan.records[$0].stamp.device == device })
        return (Array(scan.records.dropLast()), locations, last.stamp.time)
    }

    /// The problem file at `path`, when it has not changed since its read
    /// found the problem: its problems are noted again, for the status, and
    /// it is not read. Nil when it is no problem file, or has changed.
    private func unchangedProblem(_ path: String) -> ProblemFile? {
        guard let known = problemFiles[path] else { return nil }
        guard status(of: path) == known.stamp else {
            problemFiles[path] = nil
            return nil
        }
        for problem in known.problems { report.note(problem) }
        return known
    }

    /// Remembers `path`, whose status was `stamp` before it was read, as a
    /// problem file when that read noted problems (those after the first
    /// `since`) that only a change of the file clears; `readable` says
    /// whether it could be read at all (a segment that cannot be read is left
    /// for a later one). Without a status (it vanished), nothing is
    /// remembered; nor while it changed within ``FolderSurvey/settling``: a
    /// file changed again within the same tick of the filesystem's clock,
    /// with the same size, keeps its status, so only then does its status
    /// stand for its content (as a survey takes a folder's names).
    private func rememberProblem(_ path: String, stamp: FolderSurvey.FileStamp?, since: Int, readable: Bool? = nil) {
        let problems = report.problems.dropFirst(since).filter { $0.file == path && Self.lastsUntilChanged.contains($0.kind) }
        guard let stamp, !problems.isEmpty, FolderSurvey.now() - stamp.changed > FolderSurvey.settling else { return }
        problemFiles[path] = ProblemFile(stamp: stamp, problems: Array(problems),
                                         readable: readable ?? !problems.contains { $0.kind == .unreadable })
    }

    /// Forgets what the store's old keys decided, now that it has new ones (a
    /// roster version added a member, or began an epoch): a file refused
    /// under them (its device no member yet, an epoch whose key this device
    /// lacked) is read again from where the refusal stopped, and the folder
    /// is read at the next refresh even if unchanged. Records the new keys
    /// refuse as well are refused again.
    func keysChanged() {
        readAt = nil
        problemFiles = problemFiles.filter { !$0.value.problems.contains { $0.kind == .refused } }
    }

    /// The problems a file keeps until it changes: reading it again would find them again.
    private static let lastsUntilChanged: Set<SyncWarning.Kind> = [.unreadable, .incompleteSnapshot, .hole, .refused]

    /// Whether a sealed folder's reads check each record's signature, rather
    /// than the last of each read, which covers the chain before it
    /// (docs/sealed.md § Checking signatures: chosen by measuring). False;
    /// `kvfs-bench sealed` sets it to time both (`DeviceStore.checksEachSignature`).
    static var verifiesEachSignature: Bool { eachSignature.load(ordering: .relaxed) }

    /// Where ``verifiesEachSignature`` is kept.
    static let eachSignature = Atomic<Bool>(false)

    /// The status of the folder's file at `path` (a link not followed), or nil when it is not there.
    private func status(of path: String) -> FolderSurvey.FileStamp? {
        ((try? folder.open()) ?? nil)?.entry((path as NSString).lastPathComponent).map(FolderSurvey.FileStamp.init)
    }

    /// The frames of a file from `offset` to its end, or nil when it vanished
    /// or cannot be read (said once). In a sealed folder they are opened and
    /// checked from `chain` (nil: the file's start), and a refusal is said.
    private func scan(_ path: String, from offset: Int, file: SealedFile, chain: RecordChain?) -> RecordFrame.Scan? {
        do throws(KVStoreError) {
            let name = (path as NSString).lastPathComponent
            guard let sealing = folder.sealing else { return try folder.scanFrames(name, from: offset) }
            let keys = sealing.keys
            let chain = chain ?? RecordChain(storeID: keys.storeID, device: device, file: file)
            // The device's own unsigned records, which its other processes appended, are read before their mark.
            let own = isOwnFolder && file.kind == .segment
            var scan = try folder.scanFrames(name, from: offset, opener: SealedFileOpener(keys: keys, device: device, chain: chain,
                                                                                           verifiesEach: Self.verifiesEachSignature, ownFolder: own))
            if scan?.signatureFailed == true || scan?.unsignedTailFailed == true {
                // The last signature (or own nonce) does not hold: the first record whose own does not is where the refusal starts.
                scan = try folder.scanFrames(name, from: offset, opener: SealedFileOpener(keys: keys, device: device, chain: chain,
                                                                                           verifiesEach: true, ownFolder: own))
            }
            if file.kind == .segment, let refused = scan?.refused { refuse(refused.reason, in: path, at: refused.offset) }
            return scan
        } catch {
            report.warnOnce("\(error); skipped")
            report.note(.unreadable, file: path, message: "\(error)",
                        fix: "it must be a regular file you can read (not a link, a folder or a FIFO): fix its owner and mode (chmod 600), or delete it")
            return nil
        }
    }

    /// The indices of the records of a segment's scan stamped by this
    /// folder's device: one stamped by another is not this device's to
    /// write, so it is skipped.
    private func stampedByDevice(_ indices: Range<Int>, of scan: RecordFrame.Scan, in path: String) -> [Int] {
        indices.filter { index in
            let record = scan.records[index]
            if record.stamp.device == device { return true }
            report.noteAndWarn(.foreignRecords, file: path, message: "\(path): skipped records stamped by another device (\(record.stamp.device.hex))",
                               fix: "a device's folder holds only its own writes: delete the file if it is not the device's")
            return false
        }
    }
}
