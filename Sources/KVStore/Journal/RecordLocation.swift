import SystemPackage

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
        var files = RecordFiles(window: 0)
        return files.record(at: location, in: self)
    }
}

/// Reads records at their locations, each folder and each of its files
/// opened once and kept open until this goes, and read a window at a time:
/// a compaction copies every version history keeps, thousands of records
/// from a few files, and opening the folder and the file and reading the
/// frame for each cost ten system calls a record. Reading the records in
/// the order of their files and offsets (``StoredRecord/inFileOrder``)
/// reads each window once.
struct RecordFiles: ~Copyable {
    /// Bytes a compaction reads from a file at a time (more for a longer frame).
    static let window = 256 << 10

    /// Bytes read at a time: a frame's own when 0.
    private let window: Int

    /// The folders opened, by path; nil for one that is not there.
    private var folders: [String: Folder?] = [:]
    /// The files opened, by folder path and file name; nil for one that is not there.
    private var files: [String: FileDescriptor?] = [:]
    /// The bytes last read: which file, from where.
    private var read: (path: String, offset: Int, bytes: [UInt8])?
    /// In a sealed folder, the chain origin of each file read, by its path, with the store it is of: what
    /// each of its records' seals binds, a hash and a device's hex to work out for every record otherwise.
    private var origins: [String: (storeID: String, origin: [UInt8])] = [:]
    /// The cipher context the records of sealed folders are opened with, one after another.
    private let cipher = RecordCipher.Context()

    /// Reads `window` bytes at a time (at least a frame's): 0 for a record or two, ``window`` for many.
    init(window: Int) {
        self.window = window
    }

    deinit {
        for case let file? in files.values { try? file.close() }
    }

    /// The record whose frame is at `location` in `folder`, as ``DeviceFolder/record(at:)`` reads it.
    mutating func record(at location: RecordLocation, in folder: DeviceFolder) -> JournalRecord? {
        let name = location.fileName
        let path = folder.path + "/" + name
        if start(of: location, path: path) == nil {
            if folders[folder.path] == nil { folders[folder.path] = .some((try? folder.open()) ?? nil) }
            guard case let handle?? = folders[folder.path] else { return nil }
            if files[path] == nil { files[path] = .some((try? handle.openFile(name, .readOnly)) ?? nil) }
            guard case let file?? = files[path] else { return nil }
            var failed = false
            let bytes = [UInt8](unsafeUninitializedCapacity: max(location.length, window)) { buffer, count in
                do throws(KVStoreError) {
                    count = try handle.read(file, named: name, from: location.offset, into: UnsafeMutableRawBufferPointer(buffer))
                } catch {
                    (count, failed) = (0, true)
                }
            }
            guard !failed else { return nil }
            read = (path, location.offset, bytes)
        }
        // A file that ends before the frame does holds no record there.
        guard let start = start(of: location, path: path), let read else { return nil }
        return read.bytes.withUnsafeBytes {
            record(inFrame: UnsafeRawBufferPointer(rebasing: $0[start..<start + location.length]), at: location, in: folder, path: path)
        }
    }

    /// Where the frame at `location` of the file at `path` starts in the bytes last read; nil unless they hold it whole.
    private func start(of location: RecordLocation, path: String) -> Int? {
        guard let read, read.path == path, location.offset >= read.offset,
              location.offset + location.length <= read.offset + read.bytes.count else { return nil }
        return location.offset - read.offset
    }

    /// The record in `frame`, the whole frame read from `location` in `folder`, whose file is at `path`.
    private mutating func record(inFrame frame: UnsafeRawBufferPointer, at location: RecordLocation, in folder: DeviceFolder,
                                 path: String) -> JournalRecord? {
        guard frame.count == location.length, let length = RecordFrame.payloadLength(ofWholeFrame: frame) else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: frame[RecordFrame.headerSize..<RecordFrame.headerSize + length])
        guard let sealing = folder.sealing else { return RecordCodec.decode(payload) }
        let keys = sealing.keys
        guard let origin = origin(of: location, in: folder, path: path, keys: keys), let parts = SealedRecord.Parts(payload),
              case let .success(plain) = parts.open(keys: keys, origin: origin, cipher: cipher) else { return nil }
        return plain.withUnsafeBytes { RecordCodec.decode($0) }
    }

    /// The chain origin of the file at `path` (``RecordChain``), worked out once; nil when the folder's name is no device's.
    private mutating func origin(of location: RecordLocation, in folder: DeviceFolder, path: String, keys: SealingKeys) -> [UInt8]? {
        // The store's too: a sync directory may come to hold another store.
        if let known = origins[path], known.storeID == keys.storeID { return known.origin }
        guard let device = DeviceID(hex: folder.name) else { return nil }
        let origin = RecordChain(storeID: keys.storeID, device: device, file: SealedFile(location)).origin
        origins[path] = (keys.storeID, origin)
        return origin
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
        var files = RecordFiles(window: 0)
        return read(from: &files)
    }

    /// Whether `self` lies before `other` in their folders' files: the order
    /// in which ``RecordFiles`` reads records a window at a time.
    func precedesInFile(_ other: StoredRecord) -> Bool {
        let (a, b) = (location, other.location)
        return (folder.path, a.generation, a.inSnapshot ? 0 : 1, a.offset) < (other.folder.path, b.generation, b.inSnapshot ? 0 : 1, b.offset)
    }

    /// ``read()``, through `files`, which keeps the files it opens for the next records.
    func read(from files: inout RecordFiles) -> JournalRecord? {
        guard let record = files.record(at: location, in: folder), record.stamp == stamp,
              let index = record.changes.firstIndex(where: { $0.key == key }) else { return nil }
        return record.change(index)
    }
}
