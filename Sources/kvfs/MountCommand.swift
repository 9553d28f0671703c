import ArgumentParser
import Foundation
import KVFileSystem
import KVStore

/// `kvfs mount MOUNTPOINT`: serves the store as a filesystem. Returns once the
/// mount is ready, leaving a daemon behind, unless `--foreground`.
struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mount", abstract: "Mount the store at a folder.")

    @Argument(help: "An empty folder to mount at.") var mountPoint: String
    @OptionGroup var store: StoreOptions
    @Option(name: .customLong("device-name"), help: "How other devices name this one (default: the host name).") var deviceName: String?
    @Flag(help: "Stay attached: serve until unmounted, SIGTERM or SIGINT.") var foreground = false
    @Option(name: .customLong("scratch"), help: "Another glob for editors' scratch files, kept in memory and never synced.")
    var scratchPatterns: [String] = []
    @Option(name: .customLong("poll-interval"), help: "Seconds between looks at the sync directory besides inotify.") var pollInterval: Double = 1
    @Flag(help: "Only poll the sync directory (for NFS and other folders changed from elsewhere).") var polling = false
    @Option(name: .short, help: "FUSE mount options, comma-separated (e.g. allow_other); kvfs's own: sync_dir=, state_dir=, device_name=, scratch=, poll_interval=, polling.")
    var options: [String] = []

    func run() throws {
        let configuration = try makeConfiguration()
        if foreground {
            let state = configuration.stateDirectory ?? DeviceStore.defaultStateDirectory(for: configuration.syncDirectory)
            let log = state.appendingPathComponent("daemon.log").path
            let status = KVMount.run(configuration) { error in Daemon.reportReady(error, log: log) }
            throw ExitCode(status)
        }
        try Daemon.start(arguments: Array(CommandLine.arguments.dropFirst()), mountPoint: configuration.mountPoint)
    }

    private func makeConfiguration() throws -> MountConfiguration {
        var configuration = MountConfiguration(
            mountPoint: URL(fileURLWithPath: mountPoint).standardizedFileURL.path,
            syncDirectory: store.syncDirectory.map { URL(fileURLWithPath: $0) } ?? DeviceStore.defaultSyncDirectory)
        configuration.stateDirectory = store.stateDirectory.map { URL(fileURLWithPath: $0) }
        configuration.deviceName = deviceName
        configuration.scratchPatterns += scratchPatterns
        configuration.pollInterval = pollInterval
        configuration.polling = polling
        for option in options.flatMap({ $0.split(separator: ",").map(String.init) }) {
            let (name, value) = option.split(separator: "=", maxSplits: 1).map(String.init).pairOrSingle
            switch name {
            case "sync_dir": configuration.syncDirectory = URL(fileURLWithPath: value ?? "")
            case "state_dir": configuration.stateDirectory = URL(fileURLWithPath: value ?? "")
            case "device_name": configuration.deviceName = value
            case "scratch": configuration.scratchPatterns.append(value ?? "")
            case "poll_interval": configuration.pollInterval = Double(value ?? "") ?? configuration.pollInterval
            case "polling": configuration.polling = true
            case "_netdev", "nofail", "noauto", "auto", "user", "users", "defaults": continue
            default: if !name.hasPrefix("x-") { configuration.fuseOptions.append(option) }
            }
        }
        return configuration
    }
}

private extension Array where Element == String {
    var pairOrSingle: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}

/// `kvfs unmount MOUNTPOINT`: unmounts, and returns once the daemon has committed and exited.
struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unmount", abstract: "Unmount a kvfs mount.")
    @Argument(help: "The mount point.") var mountPoint: String

    func run() throws {
        try KVMount.unmount(URL(fileURLWithPath: mountPoint).standardizedFileURL.path)
    }
}
