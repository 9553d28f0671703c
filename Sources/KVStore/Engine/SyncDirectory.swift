import Foundation

/// The folder several devices share: `store-id` (written once, by the first
/// device) and `devices/<device id>/`, one folder per device, written only by
/// that device. Anything else is not the store's and is ignored.
struct SyncDirectory: Sendable {
    let path: String

    var devicesPath: String { path + "/devices" }

    func folder(of device: DeviceID) -> DeviceFolder { DeviceFolder(path: devicesPath + "/" + device.hex) }

    /// The devices with a folder here; junk names (`..`, `.DS_Store`, conflict copies) are not devices.
    func devices() -> [DeviceID] {
        Files.list(devicesPath).compactMap(DeviceID.init(hex:))
    }

    /// The store id, or nil when no device has created the store yet.
    func storeID() -> String? {
        guard let bytes = try? Files.read(path + "/store-id") else { return nil }
        let id = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    /// The store id, creating the store when the folder holds none.
    func createStoreIfNeeded() throws(KVStoreError) -> String {
        try Files.makeDirectory(devicesPath)
        if let id = storeID() { return id }
        let id = UUID().uuidString.lowercased()
        try Files.writeAtomically(path + "/store-id", Array((id + "\n").utf8))
        return id
    }

    /// A device's human name, from `devices/<id>/device.json`.
    func name(of device: DeviceID) -> String? {
        guard let bytes = try? Files.read(folder(of: device).path + "/device.json"),
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        return object["name"] as? String
    }

    /// Writes this device's name into its folder.
    func setName(_ name: String, of device: DeviceID) throws(KVStoreError) {
        let path = folder(of: device).path
        try Files.makeDirectory(path)
        let json = (try? JSONSerialization.data(withJSONObject: ["name": name], options: [.sortedKeys])) ?? Data()
        try Files.writeAtomically(path + "/device.json", Array(json))
    }
}
