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

extension SealedFile {
    /// The file of a record's location.
    init(_ location: RecordLocation) {
        self.init(kind: location.inSnapshot ? .snapshot : .segment, generation: location.generation)
    }
}

extension DeviceFolder {
    /// The record whose frame is at `location`, or nil when the file is gone
    /// or no longer holds a whole record there (its device compacted since).
    /// In a sealed folder the frame's seal is opened for its file and index
    /// (``SealedRecord/Parts``): its chain was checked when the folder was read.
    func record(at location: RecordLocation) -> JournalRecord? {
        guard let bytes = (try? read(location.fileName, from: location.offset, limit: location.length)) ?? nil,
              bytes.count == location.length,
              let length = bytes.withUnsafeBytes({ RecordFrame.payloadLength(ofWholeFrame: $0) }) else { return nil }
        return bytes.withUnsafeBytes { frame in
            let payload = UnsafeRawBufferPointer(rebasing: frame[RecordFrame.headerSize..<RecordFrame.headerSize + length])
            guard let sealing else { return RecordCodec.decode(payload) }
            let keys = sealing.keys
            guard let device = DeviceID(hex: name), let parts = SealedRecord.Parts(payload),
                  case let .success(plain) = parts.open(keys: keys, origin: RecordChain(storeID: keys.storeID, device: device,
                                                                                         file: SealedFile(location)).origin)
            else { return nil }
            return plain.withUnsafeBytes { RecordCodec.decode($0) }
        }
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
