import ArgumentParser
import Foundation
import KVBucket
import KVStore

/// `kvfs status [--json] [--stale-after SECONDS]`: the store's usage, the
/// daemon, every device's health, and what keeps devices from getting each
/// other's writes.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show keys and bytes used, every device's health, and sync warnings.",
        discussion: """
            For every device: its state (this, active, stopped, quiet, vanished, retired, as `kvfs devices` \
            says), when its folder last changed here, its newest write, how far it has read each other device \
            and how far behind it is; whether a daemon answered; and warnings, each naming the file and the \
            fix, for anything that blocks reading a device's folder.
            """)
    @Flag(help: "Print the JSON document .kvfs/status holds.") var json = false
    // `.unconditional`: `--stale-after -5` is a bad value, refused as such, not a missing one.
    @Option(parsing: .unconditional, help: "Call a device quiet once nothing of it arrived for this many seconds (devices publish a heartbeat every 30 s; default 300).")
    var staleAfter: Double?
    @OptionGroup var store: StoreOptions

    func run() throws {
        // Checked here, not in validate(): the parser wraps what validate() throws and exits 1 with it, not 64.
        if let staleAfter, !(staleAfter > 0) { throw CommandError.usage("--stale-after must be a positive number of seconds") }
        var status = try StoreStatus(json: StoreAccess.perform(.status, store))
        if let staleAfter { status = status.judged(staleAfter: staleAfter) }
        print(json ? status.json() : Self.summary(status) + Self.bucketLines(try BucketStatus.all()), terminator: "")
    }

    /// A line for each bucket that carries the sync root (docs/buckets.md): its last upload and download, the
    /// requests of this hour, its last error.
    static func bucketLines(_ buckets: [BucketStatus]) -> String {
        buckets.map { bucket in
            "bucket:     \(bucket.location): last upload \(bucket.lastUpload.map(DateText.format) ?? "never"), "
                + "last download \(bucket.lastDownload.map(DateText.format) ?? "never"), \(bucket.requestsThisHour) requests this hour, "
                + "last error: \(bucket.lastError ?? "none")\n"
        }.joined()
    }

    /// A sealed store's line: its roster version and epoch, its members by their roster names, the recovery key.
    static func sealedLine(_ sealed: SealedStatus) -> String {
        let members = sealed.members.map { "\($0.name) (\($0.id.prefix(8)))" }.joined(separator: ", ")
        return "yes, roster version \(sealed.rosterVersion), epoch \(sealed.epoch); members: \(members); "
            + (sealed.recoveryKey ? "a recovery key can recover it" : "no recovery key")
    }

    /// The status in lines a person reads.
    static func summary(_ status: StoreStatus) -> String {
        var lines = [
            "store:      \(status.storeID) in \(status.syncDirectory)",
            "device:     \(status.device.name) (\(status.device.id))",
            "keys:       \(status.keys.used) of \(status.keys.limit)",
            "bytes:      \(status.bytes.used) of \(status.bytes.limit)",
            "last sync:  \(status.lastSync.map(DateText.format) ?? "never")",
            "sealed:     \(status.sealed.map(sealedLine) ?? "no (values are in the clear in the sync directory)")",
        ]
        if !status.setAside.isEmpty { lines.append("set aside:  \(status.setAside.joined(separator: ", ")) (concurrent writes passed the quota)") }
        if status.pid != Int(getpid()) {
            lines.append(contentsOf: daemonLines(pid: status.pid, version: status.version, executable: status.executable))
            lines.append("mount:      \(status.mountPoint ?? "none") (the daemon answered: it is alive)")
        } else {
            lines.append("mount:      none (no daemon holds this device; the store was opened by this command)")
        }
        lines.append("devices:")
        lines.append(contentsOf: DevicesCommand.table(status.devices).split(separator: "\n").map { "  " + $0 })
        lines.append(status.warnings.isEmpty ? "warnings:   none" : "warnings:")
        for warning in status.warnings {
            lines.append("  - \(warning.message)")
            lines.append("    fix: \(warning.fix)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Seconds as a short age: `12 s ago`, `5 min ago`, `3 h ago`, `2 d ago`.
    static func age(_ seconds: Double) -> String { duration(seconds) + " ago" }

    /// A reading lag: `none`, or how far behind.
    static func lag(_ seconds: Double) -> String { seconds <= 0 ? "none" : seconds > 1e15 ? "all" : duration(seconds) }

    private static func duration(_ seconds: Double) -> String {
        switch seconds {
        case ..<120: "\(Int(seconds)) s"
        case ..<7200: "\(Int(seconds / 60)) min"
        case ..<172_800: "\(Int(seconds / 3600)) h"
        default: "\(Int(seconds / 86400)) d"
        }
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
