import Foundation

/// A snapshot of a store's state, as `.kvfs/status` shows it in JSON.
public struct StoreStatus: Sendable {
    /// The sync directory's store id.
    public var storeID: String
    /// The sync directory's path.
    public var syncDirectory: String
    /// This device's state directory.
    public var stateDirectory: String
    /// This device.
    public var device: DeviceStatus
    /// Keys and bytes used.
    public var usage: QuotaUsage
    /// Keys the quota rule left out after concurrent writes.
    public var setAside: [String]
    /// Every known device.
    public var devices: [DeviceStatus]
    /// When other devices' records were last read.
    public var lastSync: Date?

    /// The JSON document (with the serving process's `pid`, its kvfs
    /// `version` and its `executable`, which ends in " (deleted)" once the
    /// binary was replaced under it), pretty-printed with sorted keys.
    public func json() -> String {
        func date(_ value: Date?) -> Any { value.map(DateText.format) ?? NSNull() }
        func device(_ status: DeviceStatus) -> [String: Any] {
            ["id": status.id, "name": status.name, "lastWrite": date(status.lastWrite)]
        }
        let object: [String: Any] = [
            "storeID": storeID,
            "pid": Int(ProcessInfo.processInfo.processIdentifier),
            "version": KVFSVersion.description,
            "executable": (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "",
            "syncDirectory": syncDirectory,
            "stateDirectory": stateDirectory,
            "device": device(self.device),
            "keys": ["used": usage.keys, "limit": Limits.maxKeys],
            "bytes": ["used": usage.bytes, "limit": Limits.maxTotalBytes],
            "setAside": setAside,
            "devices": devices.map(device),
            "lastSync": date(lastSync),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// One device as the status shows it.
public struct DeviceStatus: Sendable {
    /// Its id.
    public var id: String
    /// Its name.
    public var name: String
    /// When its latest write still in force was made.
    public var lastWrite: Date?
}
