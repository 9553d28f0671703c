import ArgumentParser
import Foundation
import KVStore

/// `kvfs status [--json]`: the store's usage, devices and last sync.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show keys and bytes used, devices, and the last sync.")
    @Flag(help: "Print the JSON document .kvfs/status holds.") var json = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        let document = String(decoding: try StoreAccess.perform(.status, store), as: UTF8.self)
        if json {
            print(document, terminator: "")
        } else {
            print(try Self.summary(document), terminator: "")
        }
    }

    /// The status document in a few lines a person reads.
    static func summary(_ document: String) throws -> String {
        guard let object = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any],
              let keys = object["keys"] as? [String: Int], let bytes = object["bytes"] as? [String: Int],
              let device = object["device"] as? [String: Any], let devices = object["devices"] as? [[String: Any]]
        else { throw CommandError("the status document is not what kvfs writes") }
        var lines = [
            "store:      \(object["storeID"] ?? "?") in \(object["syncDirectory"] ?? "?")",
            "device:     \(device["name"] ?? "?") (\(device["id"] ?? "?"))",
            "keys:       \(keys["used"] ?? 0) of \(keys["limit"] ?? 0)",
            "bytes:      \(bytes["used"] ?? 0) of \(bytes["limit"] ?? 0)",
            "last sync:  \(object["lastSync"] as? String ?? "never")",
        ]
        if let pid = object["pid"] as? Int, let version = object["version"] as? String,
           let executable = object["executable"] as? String, pid != Int(getpid()) {
            lines.append(contentsOf: daemonLines(pid: pid, version: version, executable: executable))
        }
        lines.append("devices:")
        for other in devices {
            lines.append("  \(other["name"] ?? "?") (\(other["id"] ?? "?")), last write \(other["lastWrite"] as? String ?? "none")")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The daemon that answered, and whether its binary was replaced under
    /// it (an upgrade): the kernel then shows its executable as deleted.
    static func daemonLines(pid: Int, version: String, executable: String) -> [String] {
        let replacedSuffix = " (deleted)"
        guard executable.hasSuffix(replacedSuffix) else { return ["daemon:     pid \(pid), kvfs \(version)"] }
        let path = String(executable.dropLast(replacedSuffix.count))
        let mountPoint = mountPointOfDaemon(pid) ?? "MOUNTPOINT"
        return [
            "daemon:     pid \(pid) runs an old kvfs binary (\(version)): \(path) was replaced since it started (this is kvfs \(KVFSVersion.description))",
            "            restart the mount to run the new one: kvfs unmount \(mountPoint) && kvfs mount \(mountPoint) (with its options),",
            "            or under systemd: systemctl restart the unit that mounts it (systemctl --user restart kvfs@$(systemd-escape --path \(mountPoint)))",
        ]
    }

    /// The mount point on a daemon's command line (`kvfs mount MOUNTPOINT …`).
    private static func mountPointOfDaemon(_ pid: Int) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let index = arguments.firstIndex(of: "mount"), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }
}
