import ArgumentParser
import Foundation
import KVFileSystem
import KVStore
import KVSyncthing
import LinuxSystem

/// `kvfs mount MOUNTPOINT`: serves the store as a filesystem. Returns once the
/// mount is ready, leaving a daemon behind, unless `--foreground`.
struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount", abstract: "Mount the store at a folder.",
        discussion: """
            The daemon logs to daemon.log in the state directory (rotated past 1 MiB); with --foreground, or \
            under systemd, to standard error (the journal). SIGTERM, SIGINT and SIGHUP commit what was written \
            and unmount. -o takes FUSE's options (allow_other, default_permissions, ...) and kvfs's own: \
            store=ID (the store ID of the sync root that sync_dir=, --sync-dir or fstab's first field names; \
            default: $XDG_DATA_HOME/kvfs/), sync_dir=DIR, state_dir=DIR, device_name=NAME, scratch=GLOB, \
            poll_interval=SECONDS, polling, \
            syncthing=URL, syncthing_config=PATH, syncthing_key_file=PATH, and nonempty (mount over a folder \
            that holds files, hiding them). Options for mount(8) (_netdev, nofail, \
            noauto, user, x-systemd.*) are ignored. `kvfs mount` returns once the mount is ready; the mount \
            point must be an empty folder (-o nonempty mounts over one). A second mount of a state directory \
            fails, naming the holder.
            """)

    @Argument(help: "An empty folder to mount at.") var mountPoint: String
    @OptionGroup var store: StoreOptions
    @Option(name: .customLong("device-name"), help: "How other devices name this one (default: the host name; at most \(DeviceName.maximumLength) characters).")
    var deviceName: String?
    @Flag(name: [.customShort("f"), .long], help: "Stay attached: serve until unmounted, SIGTERM or SIGINT, logging to standard error.")
    var foreground = false
    @Flag(name: [.customShort("d"), .long], help: "Debug: stay attached and log every FUSE request and reply.")
    var debug = false
    @Option(name: .customLong("scratch"), help: "Another glob for editors' scratch files, kept in memory and never synced.")
    var scratchPatterns: [String] = []
    // `.unconditional`: `--poll-interval -5` is a bad value, refused as such, not a missing one.
    @Option(name: .customLong("poll-interval"), parsing: .unconditional, help: "Seconds between looks at the sync directory besides inotify (more than 0, at most 3600).")
    var pollInterval: Double = 1
    @Flag(help: "Only poll the sync directory (for NFS and other folders changed from elsewhere).") var polling = false
    @Option(name: .customLong("syncthing"), help: ArgumentHelp("Ask the Syncthing at this URL (e.g. http://127.0.0.1:8384) to scan this device's folder after each commit.", valueName: "url"))
    var syncthingURL: String?
    @Option(name: .customLong("syncthing-config"), help: ArgumentHelp("Syncthing's config.xml, to read its API key from (default: Syncthing's usual places).", valueName: "path"))
    var syncthingConfig: String?
    @Option(name: .customLong("syncthing-key-file"), help: ArgumentHelp("A file holding only Syncthing's API key (instead of config.xml).", valueName: "path"))
    var syncthingKeyFile: String?
    @Option(name: .short, help: "Mount options, comma-separated (see below).")
    var options: [String] = []

    func run() throws {
        DaemonLog.setLevel(debug ? .debug : .info)
        let configuration = try makeConfiguration()
        let state = configuration.stateDirectory ?? DeviceStore.defaultStateDirectory(for: configuration.syncDirectory)
        let log = state.appendingPathComponent("daemon.log").path
        guard foreground || debug else {
            return try Daemon.start(arguments: Array(CommandLine.arguments.dropFirst()), mountPoint: configuration.mountPoint, log: log)
        }
        Daemon.nameProcess()
        // Every path is absolute by now; a daemon that stayed in the folder it
        // was started from would keep that folder's disk from being unmounted.
        chdir("/")
        if Daemon.isChild {
            // As the store makes its folders: 0700 less the umask, never chmod'ed
            // (an error here is the store's to report when it opens the folder).
            try? makeFolders(state.path, mode: 0o700)
            DaemonLog.writeToFile(log)
        }
        var failure: CommandError?
        let status = KVMount.run(configuration, service: { DaemonService(serving: $0) }) { error in
            failure = error.map(CommandError.init)
            // The daemon's log says why it did not mount, as `kvfs mount` does (its terminal may be long gone: a unit, fstab).
            if let failure, Daemon.isChild { DaemonLog.logger.error("\(failure.description)") }
            Daemon.reportReady(failure)
            if error == nil { SystemdNotify.send("READY=1\nSTATUS=mounted at \(configuration.mountPoint)") }
        }
        if let failure, !Daemon.isChild { throw failure }
        throw ExitCode(status)
    }

    private func makeConfiguration() throws -> MountConfiguration {
        var configuration = MountConfiguration(
            mountPoint: URL(fileURLWithPath: mountPoint, isDirectory: true).standardizedFileURL.path,  // no stat: a hung mount point must not hang kvfs mount
            syncDirectory: try store.syncURL)
        configuration.stateDirectory = store.stateDirectory.map { URL(fileURLWithPath: $0) }
        configuration.deviceName = try deviceName.map(Validation.deviceName)
        configuration.scratchPatterns += scratchPatterns
        configuration.pollInterval = try Validation.pollInterval(pollInterval, as: "--poll-interval")
        configuration.polling = polling
        var syncthing = (url: syncthingURL, config: syncthingConfig, keyFile: syncthingKeyFile)
        configuration.debug = debug
        var root = store.syncDirectory.map { URL(fileURLWithPath: $0) }, storeInRoot: String?  // -o store=ID
        for option in options.flatMap({ $0.split(separator: ",").map(String.init) }) {
            let (name, value) = option.split(separator: "=", maxSplits: 1).map(String.init).pairOrSingle
            switch name {
            case "sync_dir":
                configuration.syncDirectory = URL(fileURLWithPath: try Validation.required(value, for: name))
                root = configuration.syncDirectory
            case "store": storeInRoot = try Validation.required(value, for: name)
            case "state_dir": configuration.stateDirectory = URL(fileURLWithPath: try Validation.required(value, for: name))
            case "device_name": configuration.deviceName = try Validation.deviceName(try Validation.required(value, for: name))
            case "scratch": configuration.scratchPatterns.append(try Validation.required(value, for: name))
            case "poll_interval":
                let text = try Validation.required(value, for: name)
                guard let seconds = Double(text) else { throw CommandError.usage("poll_interval=\(text) is not a number of seconds") }
                configuration.pollInterval = try Validation.pollInterval(seconds, as: "poll_interval")
            case "polling": configuration.polling = true
            case "syncthing": syncthing.url = try Validation.required(value, for: name)
            case "syncthing_config": syncthing.config = try Validation.required(value, for: name)
            case "syncthing_key_file": syncthing.keyFile = try Validation.required(value, for: name)
            case "nonempty": configuration.mountOverFiles = true
            case "_netdev", "nofail", "noauto", "auto", "user", "users", "nouser", "defaults": continue
            default: if !name.hasPrefix("x-") && !name.hasPrefix("comment=") { configuration.fuseOptions.append(option) }
            }
        }
        if let storeInRoot {
            configuration.syncDirectory = try Validation.store(storeInRoot, in: root ?? StoreRoot.default.url, besides: store.storeIdentifier)
        }
        if let url = syncthing.url {
            do {
                configuration.syncthing = try SyncthingEndpoint.load(url: url, configFile: syncthing.config, keyFile: syncthing.keyFile)
            } catch {
                throw CommandError.usage("--syncthing \(url): \(error)")
            }
        } else if syncthing.config != nil || syncthing.keyFile != nil {
            throw CommandError.usage("--syncthing-config and --syncthing-key-file need --syncthing URL")
        }
        return configuration
    }
}

/// What `kvfs mount` checks of its option values before it mounts.
enum Validation {
    /// A device name, by the store's rule (``DeviceName``), refused as a usage error.
    static func deviceName(_ name: String) throws -> String {
        do { return try DeviceName.validate(name) } catch { throw CommandError.usage(error.description) }
    }

    static func pollInterval(_ seconds: Double, as option: String) throws -> Double {
        guard seconds.isFinite, seconds > 0, seconds <= 3600 else {
            throw CommandError.usage("\(option) must be more than 0 and at most 3600 seconds, not \(seconds)")
        }
        return seconds
    }

    /// The folder of the store `-o store=ID` names in `root`; a bad identifier, or --store too, is a usage error.
    static func store(_ text: String, in root: URL, besides flag: String?) throws -> URL {
        guard flag == nil else { throw CommandError.usage("--store and -o store= name a store each; give one") }
        do throws(InvalidStoreIdentifier) { return StoreRoot(url: root).folder(of: try StoreIdentifier(text)) } catch { throw CommandError.usage(error.description) }
    }

    static func required(_ value: String?, for option: String) throws -> String {
        guard let value, !value.isEmpty else { throw CommandError.usage("the mount option \(option) needs a value (\(option)=...)") }
        return value
    }
}

/// What the daemon serves beside the filesystem: the control socket, and
/// telling systemd when it stops.
final class DaemonService: MountService {
    private let control: ControlServer?

    init(serving mounted: MountedStore) {
        control = ControlServer(serving: mounted)
    }

    func stop() {
        SystemdNotify.send("STOPPING=1")
        control?.stop()
    }
}

private extension Array where Element == String {
    var pairOrSingle: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}

/// `kvfs unmount MOUNTPOINT`: unmounts, and returns once the daemon has committed and exited.
struct UnmountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount", abstract: "Unmount a kvfs mount.",
        discussion: """
            Returns once the daemon has committed what was written and exited, its state directory free. It \
            ends the daemon even when another mount namespace holds a copy of the mount: the FUSE connection \
            is aborted (through fusectl, /sys/fs/fuse/connections) and the copies answer ENOTCONN.
            """)
    @Argument(help: "The mount point.") var mountPoint: String

    func run() throws {
        try KVMount.unmount(URL(fileURLWithPath: mountPoint).standardizedFileURL.path, daemon: ControlSocket.daemon(saying:))
    }
}
