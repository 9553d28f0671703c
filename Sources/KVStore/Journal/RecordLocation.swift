/// Where a record lies in a device's folder: one frame of a snapshot or a
/// segment. History keeps only this of the records it lists, and reads a
/// version's value back from its frame when someone asks for it.
struct RecordLocation: Hashable, Sendable {
    /// The file's generation (`snapshot-<G>.snap` or `journal-<G>.log`).
    var generation: UInt64
    /// Whether the file is the snapshot of that generation, rather than its segment.
    var inSnapshot: Bool
    /// Where the frame starts, and its length with its header.
    var offset: Int, length: Int

    /// The file's name in the folder.
    var fileName: String {
        inSnapshot ? DeviceFolder.snapshotName(generation) : DeviceFolder.segmentName(generation)
    }
}

extension DeviceFolder {
    /// The record whose frame is at `location`, or nil when the file is gone
    /// or no longer holds a whole record there (its device compacted since).
    func record(at location: RecordLocation) -> JournalRecord? {
        guard let bytes = (try? read(location.fileName, from: location.offset, limit: location.length)) ?? nil,
              bytes.count == location.length else { return nil }
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        guard scan.records.count == 1, scan.frames.first == 0..<location.length else { return nil }
        return scan.records[0]
    }
}

/// A record a snapshot copies from a folder's files, read only when the
/// snapshot is written (without the store's lock): one key's change of the
/// record at `location` in `folder`, stamped `stamp`.
struct StoredRecord: Sendable {
    let key: StoreKey
    let stamp: Stamp
    let folder: DeviceFolder
    let location: RecordLocation

    /// The record of this key's change alone (a rename's half as a put or a
    /// removal), with every fact its record holds of it (its rank and its
    /// base: a `lost` mark rests on the base), or nil when its file no longer holds it.
    func read() -> JournalRecord? {
        guard let record = folder.record(at: location), record.stamp == stamp,
              let index = record.changes.firstIndex(where: { $0.key == key }) else { return nil }
        return record.change(index)
    }
}
