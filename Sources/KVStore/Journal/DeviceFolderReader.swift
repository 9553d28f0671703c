import Foundation

/// Follows one device's folder, handing out its records as they appear.
///
/// Tolerates what a shared or synchronized folder does: files that vanish
/// between listing and reading (the owner compacted), tails still being
/// appended or copied (read again later), holes still being filled (read
/// again from the hole), half-copied snapshots (an older whole one serves
/// meanwhile), corrupt records and records stamped by another device (skipped
/// with a warning), and files that are not regular files (skipped).
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
        /// The latest stamp seen, the snapshot's closing one included: the clock moves past it.
        var latest: HLCTimestamp?
    }

    /// Bytes read from a file in one go: bounds memory whatever a hostile file holds.
    static let readLimit = 16 << 20

    let device: DeviceID
    let folder: DeviceFolder
    /// The snapshot generation read, or nil before any.
    private(set) var snapshotGeneration: UInt64?
    /// The segment being followed, where to read it next, and where its whole frames end.
    private(set) var segmentGeneration: UInt64 = 1
    private(set) var offset = 0
    private(set) var tailOffset = 0
    /// Every record of the device stamped up to this has been read (or was
    /// dropped by its owner); nil before any.
    private(set) var contiguous: HLCTimestamp?
    /// Whether reading started from a known beginning (a snapshot, or the
    /// first segment) and has had no gap since.
    private var inOrder = true
    private var warned: Set<String> = []
    private let warn: (String) -> Void

    init(device: DeviceID, folder: DeviceFolder, warn: @escaping (String) -> Void) {
        self.device = device
        self.folder = folder
        self.warn = warn
    }

    /// The records that appeared since the last call.
    func readNew() -> Batch {
        let listing = folder.listing()
        var batch = Batch()
        readNewestSnapshot(listing.snapshots, into: &batch)
        for generation in listing.segments where generation >= segmentGeneration {
            if generation > segmentGeneration {
                // The owner moved on; what our copy of the old segment lacks is
                // in the new snapshot, which has not arrived whole yet.
                inOrder = false
                segmentGeneration = generation
                offset = 0
                tailOffset = 0
            }
            readSegment(into: &batch)
        }
        return batch
    }

    /// Takes the newest whole snapshot newer than the one read, if any.
    private func readNewestSnapshot(_ generations: [UInt64], into batch: inout Batch) {
        for generation in generations.reversed() where generation > (snapshotGeneration ?? 0) {
            guard let (records, end) = readSnapshot(generation) else { continue }
            batch = Batch(replacesAll: true, records: records, latest: end)
            snapshotGeneration = generation
            segmentGeneration = generation
            offset = 0
            tailOffset = 0
            inOrder = true
            contiguous = max(contiguous ?? end, end)
            return
        }
    }

    /// Reads the followed segment from `offset`.
    private func readSegment(into batch: inout Batch) {
        let path = folder.segmentPath(segmentGeneration)
        guard let bytes = read(path, from: offset) else { return }
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        for range in scan.skipped {
            warnOnce("\(path): skipped \(range.count) corrupt bytes at offset \(offset + range.lowerBound)")
        }
        if let range = scan.unreadable {
            warnOnce("\(path): \(range.count) bytes at offset \(offset + range.lowerBound) are not whole records (corrupt, or still arriving); reading stops there until they are")
        }
        let settled = own(scan.records.prefix(scan.settledCount), in: path)
        let fresh = settled + own(scan.records.dropFirst(scan.settledCount), in: path)
        batch.records += fresh
        for record in fresh { batch.latest = max(batch.latest ?? record.stamp.time, record.stamp.time) }
        if inOrder, let last = settled.last {
            contiguous = max(contiguous ?? last.stamp.time, last.stamp.time)
        }
        tailOffset = offset + scan.resumeOffset
        offset += scan.settledOffset
    }

    /// A whole snapshot's records and closing stamp, or nil while it is incomplete or unreadable.
    private func readSnapshot(_ generation: UInt64) -> ([JournalRecord], HLCTimestamp)? {
        let path = folder.snapshotPath(generation)
        guard let bytes = read(path, from: 0) else { return nil }
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        guard let last = scan.records.last, case let .snapshotEnd(count) = last.operation,
              Int(count) == scan.records.count - 1, scan.skipped.isEmpty, !scan.stoppedEarly else {
            warnOnce("\(path): incomplete or corrupt snapshot; waiting for a whole one")
            return nil
        }
        return (own(scan.records.dropLast(), in: path), last.stamp.time)
    }

    /// A file's bytes from `offset`, or nil when it vanished or cannot be read (said once).
    private func read(_ path: String, from offset: Int) -> [UInt8]? {
        do throws(KVStoreError) {
            return try folder.read((path as NSString).lastPathComponent, from: offset, limit: Self.readLimit)
        } catch {
            warnOnce("\(error); skipped")
            return nil
        }
    }

    /// The records stamped by this folder's device: one stamped by another is
    /// not this device's to write, so it is skipped.
    private func own(_ records: some Collection<JournalRecord>, in path: String) -> [JournalRecord] {
        records.filter { record in
            if record.stamp.device == device { return true }
            warnOnce("\(path): skipped records stamped by another device (\(record.stamp.device.hex))")
            return false
        }
    }

    private func warnOnce(_ message: String) {
        if warned.insert(message).inserted { warn(message) }
    }
}
