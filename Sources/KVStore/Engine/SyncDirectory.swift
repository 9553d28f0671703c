import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The folder several devices share: `store-id` (written once, by the first
/// device) and `devices/<device id>/`, one folder per device, written only by
/// that device. Anything else is not the store's and is ignored.
struct SyncDirectory: Sendable {
    let path: String

    /// The most bytes read from a small file of the store (`store-id`, `device.json`, `progress.json`).
    static let smallFileLimit = 64 << 10

    var devicesPath: String { path + "/devices" }

    func folder(of device: DeviceID) -> DeviceFolder { DeviceFolder(path: devicesPath + "/" + device.hex) }

    /// The devices with a folder here. Junk names (`..`, `.DS_Store`, conflict
    /// copies), plain files and links are not devices.
    func devices() -> [DeviceID] {
        Files.list(devicesPath).compactMap { name in
            guard let device = DeviceID(hex: name), Files.isDirectory(devicesPath + "/" + name) else { return nil }
            return device
        }
    }

    /// Whether a device's folder has been removed (to retire the device): the
    /// devices folder is there and that one is not. A folder that cannot be
    /// read is not taken for a removed one.
    func hasRemovedFolder(of device: DeviceID) -> Bool {
        Files.isDirectory(devicesPath) && access(folder(of: device).path, F_OK) != 0 && errno == ENOENT
    }

    /// The store id, or nil when no device has created the store yet (or its file has not arrived).
    func storeID() -> String? {
        guard let text = readSmallFile(path + "/store-id") else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    /// The store id, creating the store when the folder holds none; "" when
    /// the folder holds other devices' folders but its `store-id` has not
    /// arrived yet (a synchronizer copies files in any order): writing one
    /// then would make a second store id, and a synchronizer conflict.
    func createStoreIfNeeded(for device: DeviceID) throws(KVStoreError) -> String {
        try Files.makeDirectory(devicesPath)
        if let id = storeID() { return id }
        if devices().contains(where: { $0 != device }) { return "" }
        let id = UUID().uuidString.lowercased()
        try Files.writeAtomically(path + "/store-id", Array((id + "\n").utf8))
        return id
    }

    /// A device's human name, from `devices/<id>/device.json`.
    func name(of device: DeviceID) -> String? {
        guard let text = readSmallFile(folder(of: device).path + "/device.json"),
              let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        return object["name"] as? String
    }

    /// Writes this device's name into its folder.
    func setName(_ name: String, of device: DeviceID) throws(KVStoreError) {
        let path = folder(of: device).path
        try Files.makeDirectory(path)
        let json = (try? JSONSerialization.data(withJSONObject: ["name": name], options: [.sortedKeys])) ?? Data()
        try Files.writeAtomically(path + "/device.json", Array(json))
    }

    /// What a device last published about its reading, or nil (none yet, or unreadable).
    func progress(of device: DeviceID) -> ReadProgress? {
        readSmallFile(folder(of: device).path + "/" + ReadProgress.fileName).flatMap(ReadProgress.init(json:))
    }

    /// Publishes this device's reading progress in its folder.
    func publish(_ progress: ReadProgress, of device: DeviceID) throws(KVStoreError) {
        try Files.writeAtomically(folder(of: device).path + "/" + ReadProgress.fileName, Array(progress.json().utf8))
    }

    /// A small file of the store as text, or nil when it is missing, not a regular file, or too large.
    private func readSmallFile(_ path: String) -> String? {
        guard let bytes = try? Files.read(path, limit: Self.smallFileLimit + 1, followLinks: false),
              bytes.count <= Self.smallFileLimit else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
