import ArgumentParser
import Foundation
import KVFileSystem
import KVStore
import KVSyncthing

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
    @Option(name: .customLong("syncthing"), help: ArgumentHelp("Ask the Syncthing at this URL (e.g. http://127.0.0.1:8384) to scan this device's folder after each commit.", valueName: "url"))
    var syncthingURL: String?
    @Option(name: .customLong("syncthing-config"), help: ArgumentHelp("Syncthing's config.xml, to read its API key from (default: Syncthing's usual places).", valueName: "path"))
    var syncthingConfig: String?
    @Option(name: .customLong("syncthing-key-file"), help: ArgumentHelp("A file holding only Syncthing's API key (instead of config.xml).", valueName: "path"))
    var syncthingKeyFile: String?
    @Option(name: .short, help: "FUSE mount options, comma-separated (e.g. allow_other); kvfs's own: sync_dir=, state_dir=, device_name=, scratch=, poll_interval=, polling, syncthing=, syncthing_config=, syncthing_key_file=.")
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
        var syncthing = (url: syncthingURL, config: syncthingConfig, keyFile: syncthingKeyFile)
        for option in options.flatMap({ $0.split(separator: ",").map(String.init) }) {
            let (name, value) = option.split(separator: "=", maxSplits: 1).map(String.init).pairOrSingle
            switch name {
            case "sync_dir": configuration.syncDirectory = URL(fileURLWithPath: value ?? "")
            case "state_dir": configuration.stateDirectory = URL(fileURLWithPath: value ?? "")
            case "device_name": configuration.deviceName = value
            case "scratch": configuration.scratchPatterns.append(value ?? "")
            case "poll_interval": configuration.pollInterval = Double(value ?? "") ?? configuration.pollInterval
            case "polling": configuration.polling = true
            case "syncthing": syncthing.url = value
            case "syncthing_config": syncthing.config = value
            case "syncthing_key_file": syncthing.keyFile = value
            case "_netdev", "nofail", "noauto", "auto", "user", "users", "defaults": continue
            default: if !name.hasPrefix("x-") { configuration.fuseOptions.append(option) }
            }
        }
        if let url = syncthing.url {
            do {
                configuration.syncthing = try SyncthingEndpoint.load(url: url, configFile: syncthing.config, keyFile: syncthing.keyFile)
            } catch {
                throw CommandError("--syncthing \(url): \(error)")
            }
        } else if syncthing.config != nil || syncthing.keyFile != nil {
            throw CommandError("--syncthing-config and --syncthing-key-file need --syncthing URL")
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
