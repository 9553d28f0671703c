import Foundation

/// One device's folder in the sync directory, which only that device writes:
/// journal segments `journal-<generation>.log` (append-only framed records)
/// and snapshots `snapshot-<generation>.snap` (the device's records that were
/// still current when it compacted, closed by a `snapshotEnd` record).
///
/// Snapshot G stands for every segment before G; segment G continues it.
/// Anything else in the folder (synchronizer temp files, conflict copies,
/// `.DS_Store`) is not the store's and is ignored.
///
/// The folder is opened afresh for each use, from the sync directory's
/// descriptor down (it may have been removed and made again meanwhile; the
/// sync directory itself is held, ``HeldFolder``), and neither `devices` nor
/// the device's folder may be a symbolic link (see ``Folder``).
struct DeviceFolder: Sendable {
    /// `<sync directory>/devices/<device id>`, for messages.
    let path: String
    /// The device's id, its folder's name.
    let name: String
    /// The sync directory.
    private let root: HeldFolder
    /// False when the store was opened read-only: the folder is then never created or written.
    var isWritable: Bool { root.isWritable }
    /// A sealed store's keys: its records are sealed and checked (``SealedRecord``); nil for a plain store.
    let sealing: StoreSealing?

    /// The folder `devices/<name>` of the sync directory `root`, sealed by `sealing` (nil: plain).
    init(in root: HeldFolder, name: String, sealing: StoreSealing? = nil) {
        self.root = root
        self.name = name
        self.sealing = sealing
        path = root.path + "/devices/" + name
    }

    /// The folder at `path` (`<sync directory>/devices/<device id>`), its sync directory held from its first use.
    init(path: String, isWritable: Bool = true) {
        let sync = ((path as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        self.init(in: HeldFolder(path: sync, isWritable: isWritable), name: (path as NSString).lastPathComponent)
    }

    /// The same folder read and written plain: what converting a store to sealed reads its plain records with.
    var unsealed: DeviceFolder { DeviceFolder(in: root, name: name) }

    static func segmentName(_ generation: UInt64) -> String { "journal-" + hex(generation) + ".log" }
    static func snapshotName(_ generation: UInt64) -> String { "snapshot-" + hex(generation) + ".snap" }

    func segmentPath(_ generation: UInt64) -> String { path + "/" + Self.segmentName(generation) }
    func snapshotPath(_ generation: UInt64) -> String { path + "/" + Self.snapshotName(generation) }

    /// The folder, or nil when it (or the sync directory) does not exist. With
    /// `create`, it is made (with `devices` and the sync directory, each 0700).
    func open(create: Bool = false) throws(KVStoreError) -> Folder? {
        try root.folder(create: create)?.folder("devices", create: create)?.folder(name, create: create)
    }

    /// A file's bytes from `offset` (at most `limit`), or nil when it or the folder does not exist.
    func read(_ name: String, from offset: Int, limit: Int) throws(KVStoreError) -> [UInt8]? {
        try open()?.read(name, from: offset, limit: limit)
    }

    /// The frames of the file `name` from `offset` to its end, scanned as
    /// ``RecordFrame/scan(_:from:)`` scans bytes, but read a window at a time
    /// (``RecordFrame/Scanner``): a file of any size is read whole, holding
    /// at most one window of its bytes. Nil when it or the folder does not exist.
    /// A sealed file's frames are opened by `opener`, whose chain has reached `offset`.
    func scanFrames(_ name: String, from offset: Int, opener: SealedFileOpener? = nil) throws(KVStoreError) -> RecordFrame.Scan? {
        guard let folder = try open(), let file = try folder.openFile(name, .readOnly) else { return nil }
        defer { try? file.close() }
        let size = Int((try? file.stat())?.size ?? 0)
        var scanner = RecordFrame.Scanner(from: offset, end: max(size, offset), opener: opener)
        // One window's room, or less for a file's short tail (what a read of new appends mostly is).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(RecordFrame.window, max(size - offset, 0)), alignment: 1)
        defer { buffer.deallocate() }
        while !scanner.isDone {
            let start = scanner.nextOffset
            let wanted = min(buffer.count, max(size - start, 0))
            let count = try folder.read(file, named: name, from: start, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]))
            // A window shorter than a whole one reaches the end (or where the file was cut meanwhile).
            scanner.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]), at: start, isEnd: count < RecordFrame.window)
        }
        return scanner.scan
    }

    /// The generations of the snapshots and segments present, each sorted.
    func listing() -> (snapshots: [UInt64], segments: [UInt64]) {
        var snapshots: [UInt64] = []
        var segments: [UInt64] = []
        for name in ((try? open()) ?? nil)?.names() ?? [] {
            if let generation = Self.generation(name, prefix: "snapshot-", suffix: ".snap") {
                snapshots.append(generation)
            } else if let generation = Self.generation(name, prefix: "journal-", suffix: ".log") {
                segments.append(generation)
            }
        }
        return (snapshots.sorted(), segments.sorted())
    }

    private static func hex(_ generation: UInt64) -> String {
        let digits = String(generation, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func generation(_ name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.utf8.count == prefix.utf8.count + 16 + suffix.utf8.count
        else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return UInt64(digits, radix: 16)
    }
}

extension DeviceFolder {
    /// When the folder last changed on this machine: the newest status change
    /// (ctime) of its files, which a synchronizer cannot set back; nil when it
    /// holds nothing readable.
    func lastChange() -> Date? {
        guard let folder = (try? open()) ?? nil else { return nil }
        return folder.names().compactMap(folder.entry).map { status in
            Date(timeIntervalSince1970: Double(status.st_ctim.tv_sec) + Double(status.st_ctim.tv_nsec) / 1e9)
        }.max()
    }
}
