import Foundation

/// Follows one device's folder, handing out each of its records once.
///
/// Tolerates what a shared or synchronized folder does: files that vanish
/// between listing and reading (the owner compacted), tails still being
/// appended or copied (read again later), half-copied snapshots (waited
/// out), and corrupt records (skipped with a warning).
final class DeviceFolderReader {
    let folder: DeviceFolder
    /// The snapshot generation read, or nil before any.
    private(set) var snapshotGeneration: UInt64?
    /// The segment being followed and how far it has been read.
    private(set) var segmentGeneration: UInt64 = 0
    private(set) var offset = 0
    /// Whether the last read stopped before the end of the followed segment.
    private(set) var stoppedAtTornTail = false
    private var warned: Set<String> = []
    private let warn: (String) -> Void

    init(folder: DeviceFolder, warn: @escaping (String) -> Void) {
        self.folder = folder
        self.warn = warn
    }

    /// The records that appeared since the last call.
    func readNew() -> [JournalRecord] {
        let listing = folder.listing()
        var records: [JournalRecord] = []
        if let newest = listing.snapshots.last, snapshotGeneration.map({ newest > $0 }) ?? true,
           let snapshot = readSnapshot(newest) {
            records = snapshot
            snapshotGeneration = newest
            segmentGeneration = newest
            offset = 0
        }
        for generation in listing.segments where generation >= segmentGeneration {
            if generation > segmentGeneration {
                if stoppedAtTornTail { break }  // an older segment is still arriving
                segmentGeneration = generation
                offset = 0
            }
            let path = folder.segmentPath(generation)
            guard let bytes = try? Files.read(path, from: offset) else { break }  // vanished: compacted meanwhile
            let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
            report(scan.skipped, in: path, base: offset)
            records += scan.records
            offset += scan.resumeOffset
            stoppedAtTornTail = scan.stoppedEarly
        }
        return records
    }

    /// A whole snapshot's records, or nil while it is incomplete or unreadable.
    private func readSnapshot(_ generation: UInt64) -> [JournalRecord]? {
        let path = folder.snapshotPath(generation)
        guard let bytes = try? Files.read(path) else { return nil }
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        guard case let .snapshotEnd(count)? = scan.records.last?.operation,
              Int(count) == scan.records.count - 1, scan.skipped.isEmpty, !scan.stoppedEarly else {
            warnOnce("\(path): incomplete or corrupt snapshot; waiting for a whole one")
            return nil
        }
        return Array(scan.records.dropLast())
    }

    private func report(_ skipped: [Range<Int>], in path: String, base: Int) {
        for range in skipped {
            warnOnce("\(path): skipped \(range.count) corrupt bytes at offset \(base + range.lowerBound)")
        }
    }

    private func warnOnce(_ message: String) {
        if warned.insert(message).inserted { warn(message) }
    }
}
