import Foundation

/// The folder several devices share: `store-id` (written once, by the first
/// device) and `devices/<device id>/`, one folder per device, written only by
/// that device. Anything else is not the store's and is ignored.
///
/// Its path is the user's (links along it are followed), resolved once: the
/// folder is then held by its descriptor (``HeldFolder``), and below it
/// nothing is opened through a link (see ``Folder``). A sync directory opened
/// read-only writes nothing, whatever is asked of it.
struct SyncDirectory: Sendable {
    let path: String
    /// False when the store was opened read-only.
    let isWritable: Bool
    /// The folder itself, held from its first use.
    let root: HeldFolder
    /// A sealed store's keys, which its device folders seal and check their records with; nil for a plain store.
    let sealing: StoreSealing?

    init(path: String, isWritable: Bool = true) {
        self.path = path
        self.isWritable = isWritable
        root = HeldFolder(path: path, isWritable: isWritable)
        sealing = nil
    }

    /// The same sync directory, its device folders sealed by `sealing` (nil: plain).
    func sealed(by sealing: StoreSealing?) -> SyncDirectory {
        SyncDirectory(path: path, isWritable: isWritable, root: root, sealing: sealing)
    }

    private init(path: String, isWritable: Bool, root: HeldFolder, sealing: StoreSealing?) {
        self.path = path
        self.isWritable = isWritable
        self.root = root
        self.sealing = sealing
    }

    /// The most bytes read from a small file of the store (`store-id`, `device.json`, `progress.json`).
    static let smallFileLimit = 64 << 10

    var devicesPath: String { path + "/devices" }

    func folder(of device: DeviceID) -> DeviceFolder {
        DeviceFolder(in: root, name: device.hex, sealing: sealing)
    }

    /// The sync directory, or nil when it does not exist (and not `create`).
    func rootFolder(create: Bool = false) throws(KVStoreError) -> Folder? {
        try root.folder(create: create)
    }

    /// The folder `devices`, or nil when it does not exist (and not `create`).
    func devicesFolder(create: Bool = false) throws(KVStoreError) -> Folder? {
        try rootFolder(create: create)?.folder("devices", create: create)
    }

    /// The folder of a device other than `own` whose journal starts with a
    /// sealed record (``SealedRecord``), or nil: a device without the
    /// store's keys finds so that the store is sealed, and writes nothing.
    /// One read of a frame's header per folder.
    func sealedFolder(other own: DeviceID) -> String? {
        devices().first { $0 != own && firstRecordFormat(of: $0) == SealedRecord.format }.map { folder(of: $0).path }
    }

    /// Whether `device`'s journal starts with a plain record: in a sealed store, a folder not converted yet
    /// (docs/sealed.md § Converting a store).
    func holdsPlainRecords(of device: DeviceID) -> Bool {
        firstRecordFormat(of: device).map { $0 != SealedRecord.format } ?? false
    }

    /// The format byte of the first record of `device`'s journal (of its newest snapshot, else of its
    /// first segment), or nil when it holds none. One read of a frame's header.
    private func firstRecordFormat(of device: DeviceID) -> UInt8? {
        let folder = folder(of: device)
        let listing = folder.listing()
        guard let name = listing.snapshots.last.map(DeviceFolder.snapshotName) ?? listing.segments.first.map(DeviceFolder.segmentName),
              let start = (try? folder.read(name, from: 0, limit: RecordFrame.headerSize + 1)) ?? nil,
              start.count == RecordFrame.headerSize + 1 else { return nil }
        return start[RecordFrame.headerSize]
    }

    /// The devices with a folder here. Junk names (`..`, `.DS_Store`, conflict
    /// copies), plain files and links are not devices.
    func devices() -> [DeviceID] {
        guard let devices = (try? devicesFolder()) ?? nil else { return [] }
        return devices.names().compactMap { name in
            guard let device = DeviceID(hex: name), devices.hasFolder(name) else { return nil }
            return device
        }
    }

    /// Whether a device's folder has been removed (to retire the device): the
    /// devices folder is there and that one is not. A folder that cannot be
    /// read is not taken for a removed one.
    func hasRemovedFolder(of device: DeviceID) -> Bool {
        guard let devices = (try? devicesFolder()) ?? nil else { return false }
        return devices.lacks(device.hex)
    }

    /// The store id, or nil when no device has created the store yet (or its file has not arrived).
    func storeID() -> String? {
        guard let text = readSmallFile("store-id", in: try? rootFolder()) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !id.isEmpty else { return nil }
        // Shown in status and logs; every device spells a planted control character alike.
        return id.controlCharactersSpelledOut
    }

    /// The store id, creating the store when the folder holds none; "" when
    /// the folder holds other devices' folders but its `store-id` has not
    /// arrived yet (a synchronizer copies files in any order): writing one
    /// then would make a second store id, and a synchronizer conflict.
    /// Read-only, it only reads the id ("" when there is none, or no folder):
    /// a path that is there but no folder it can open is an error all the same.
    func createStoreIfNeeded(for device: DeviceID) throws(KVStoreError) -> String {
        guard isWritable else {
            _ = try rootFolder()
            return storeID() ?? ""
        }
        _ = try devicesFolder(create: true)
        if let id = storeID() { return id }
        if devices().contains(where: { $0 != device }) { return "" }
        let id = UUID().uuidString.lowercased()
        try rootFolder()?.writeAtomically("store-id", Array((id + "\n").utf8))
        return id
    }

    /// Writes `store-id` again when it has gone (the sync directory was
    /// removed under a running device, which writes its folder again): the
    /// store keeps its id, so no device takes it for another store.
    func restoreStoreID(_ id: String) throws(KVStoreError) {
        guard !id.isEmpty, storeID() == nil, let root = try rootFolder(create: true), root.entry("store-id") == nil else { return }
        try root.writeAtomically("store-id", Array((id + "\n").utf8))
    }

    /// A device's human name, from `devices/<id>/device.json`; nil when it
    /// has none, or one that may not be shown (``DeviceName``).
    func name(of device: DeviceID) -> String? {
        name(in: try? folder(of: device).open(), of: device)
    }

    /// The name `device`'s folder (`folder`, opened) gives in its `device.json`.
    func name(in folder: Folder?, of device: DeviceID) -> String? {
        guard let bytes = self.folder(of: device).readSigned(Self.nameFile, in: folder) else { return nil }
        return DeviceName.shown(JSONDocument.decoded(DeviceFile.self, from: bytes)?.name)
    }

    /// The name a sealed store's roster gives `device` (signed, as it was given to `kvfs seal`, `pair` or
    /// `join`): how the device goes when its folder names it no more; nil in a plain store.
    func rosterName(of device: DeviceID) -> String? {
        sealing?.keys.memberNames[device].flatMap(DeviceName.shown)
    }

    /// The file in which a device names itself.
    static let nameFile = "device.json"

    /// Writes this device's name into its folder.
    func setName(_ name: String, of device: DeviceID) throws(KVStoreError) {
        try folder(of: device).writeSigned(Self.nameFile, JSONDocument.sorted(DeviceFile(name: name)))
    }

    /// What a device last published about its reading, or nil (none yet, or unreadable).
    func progress(of device: DeviceID) -> ReadProgress? {
        progress(in: try? folder(of: device).open(), of: device)
    }

    /// The progress `device`'s folder (`folder`, opened) publishes in its `progress.json`.
    func progress(in folder: Folder?, of device: DeviceID) -> ReadProgress? {
        self.folder(of: device).readSigned(ReadProgress.fileName, in: folder).flatMap { ReadProgress(json: String(decoding: $0, as: UTF8.self)) }
    }

    /// Publishes this device's reading progress in its folder.
    func publish(_ progress: ReadProgress, of device: DeviceID) throws(KVStoreError) {
        try folder(of: device).writeSigned(ReadProgress.fileName, Array(progress.json().utf8))
    }

    /// `device.json`: `{"name":"<name>"}`, with no newline after it.
    private struct DeviceFile: Codable {
        var name: String?

        init(name: String) { self.name = name }

        /// A name of another type counts as none.
        init(from decoder: any Decoder) throws {
            name = try? decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
        }
    }

    /// A small file of the store as text, or nil when it is missing, not a regular file, or too large.
    func readSmallFile(_ name: String, in folder: Folder?) -> String? {
        guard let folder,
              let bytes = try? folder.read(name, limit: Self.smallFileLimit + 1),
              bytes.count <= Self.smallFileLimit else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
