import Foundation
import KVStore

/// The sync root as a bucket sees it (docs/format.md § Layout): which of its
/// files this machine writes and uploads, and which paths a peer's head may
/// name for this machine to write.
struct SyncRoot {
    /// The root, `$XDG_DATA_HOME/kvfs/` by default.
    let root: StoreRoot
    /// The state directory of a store's folder on this machine: where its device id is.
    let stateDirectory: @Sendable (URL) -> URL

    /// How a file changes: a journal segment grows by appends; every other file is replaced whole.
    enum Growth { case appended, replaced }

    /// The names of a device folder's files that are the store's (docs/format.md § Foreign files).
    static let deviceFiles: Set<String> = ["writer.json", "device.json", "progress.json", "waiting.json", "adopted.json", "retention.json"]

    /// This machine's device of each store in the root (the id in the store's state directory), by store.
    func ownDevices() -> [StoreIdentifier: DeviceID] {
        var devices: [StoreIdentifier: DeviceID] = [:]
        for store in root.stores() {
            let state = stateDirectory(root.folder(of: store))
            guard let text = try? String(contentsOf: state.appendingPathComponent("device-id"), encoding: .utf8),
                  let id = DeviceID(hex: text.trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
            devices[store] = id
        }
        return devices
    }

    /// The files this machine writes, by path in the root: each store's `store-id`, its own device folder's
    /// segments, snapshots and JSON files, and the roster versions it signed.
    func ownFiles() -> [String: Growth] {
        var files: [String: Growth] = [:]
        for (store, device) in ownDevices() {
            let folder = root.folder(of: store)
            if LocalFiles.status(folder.appendingPathComponent("store-id")) != nil { files["\(store)/store-id"] = .replaced }
            let deviceFolder = "devices/\(device.hex)"
            for name in LocalFiles.names(in: folder.appendingPathComponent(deviceFolder)) {
                guard let growth = Self.growth(ofDeviceFile: name),
                      LocalFiles.status(folder.appendingPathComponent("\(deviceFolder)/\(name)")) != nil else { continue }
                files["\(store)/\(deviceFolder)/\(name)"] = growth
            }
            for name in LocalFiles.names(in: folder.appendingPathComponent("roster")) where name.hasSuffix("-\(device.hex)") {
                files["\(store)/roster/\(name)"] = .replaced
            }
        }
        return files
    }

    /// Whether a peer's head may name `path` for this machine to write: a store's `store-id`, a file of a device
    /// folder that is not this machine's (by its store's name rules), or a roster version; nothing else, and no
    /// path that leaves its folder.
    func acceptsFromPeer(_ path: String, ownDevices: [StoreIdentifier: DeviceID]) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let first = parts.first, let store = try? StoreIdentifier(first) else { return false }
        switch parts.count {
        case 2: return parts[1] == "store-id"
        case 3: return parts[1] == "roster" && parts[2].hasPrefix("version-") && !parts[2].contains("..")
        case 4:
            guard parts[1] == "devices", let device = DeviceID(hex: parts[2]), device.hex == parts[2] else { return false }
            return ownDevices[store] != device && Self.growth(ofDeviceFile: parts[3]) != nil
        default: return false
        }
    }

    /// The file at `path` in the root.
    func url(_ path: String) -> URL { root.url.appendingPathComponent(path) }

    /// How a device folder's file named `name` changes, or nil when it is not the store's.
    static func growth(ofDeviceFile name: String) -> Growth? {
        if isNumbered(name, "journal-", ".log") { return .appended }
        if isNumbered(name, "snapshot-", ".snap") || deviceFiles.contains(name) { return .replaced }
        return nil
    }

    /// Whether `name` is `PREFIX` + 16 lower-case hex digits + `SUFFIX`.
    private static func isNumbered(_ name: String, _ prefix: String, _ suffix: String) -> Bool {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + 16 + suffix.count else { return false }
        return name.dropFirst(prefix.count).dropLast(suffix.count).allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }
}
