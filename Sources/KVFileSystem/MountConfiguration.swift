import Foundation
import KVStore
import KVSyncthing

/// Everything `kvfs mount` decides about a mount.
public struct MountConfiguration: Sendable {
    /// The folder to mount at (absolute).
    public var mountPoint: String
    /// The shared sync directory.
    public var syncDirectory: URL
    /// This device's state directory; nil for the default one.
    public var stateDirectory: URL?
    /// How other devices name this one; nil for the host name.
    public var deviceName: String?
    /// Globs for editors' scratch files: kept in memory on this mount, never synced, never counted.
    public var scratchPatterns: [String] = MountConfiguration.defaultScratchPatterns
    /// Seconds between looks at the sync directory, besides inotify.
    public var pollInterval: Double = 1
    /// Whether to rely on polling alone (NFS and other folders changed from elsewhere).
    public var polling = false
    /// The Syncthing to ask for a scan of this device's folder after each commit; nil for none.
    public var syncthing: SyncthingEndpoint?
    /// Options for FUSE itself (`allow_other`, `default_permissions`, …).
    public var fuseOptions: [String] = []
    /// Whether libfuse logs every request and reply (`kvfs mount -d`).
    public var debug = false
    /// Whether to mount over a folder that holds files, hiding them (`-o nonempty`).
    public var mountOverFiles = false

    /// The options FUSE mounts with: ``fuseOptions``, plus `default_permissions`
    /// whenever `allow_other` is among them, so the kernel enforces the modes
    /// the files show (0644 keys and a 0755 folder, owned by the mounting
    /// user) for the other users `allow_other` lets in.
    public var mountOptions: [String] {
        fuseOptions.contains("allow_other") && !fuseOptions.contains("default_permissions")
            ? fuseOptions + ["default_permissions"] : fuseOptions
    }

    /// vim's swap files and its write test, backups, and emacs's lock and auto-save files.
    public static let defaultScratchPatterns = [".*.sw?", "*~", "4913", ".#*", "#*#"]

    /// The options in effect, for the daemon's startup log line.
    public var optionsDescription: String {
        var parts = ["poll_interval=\(pollInterval)"]
        if polling { parts.append("polling") }
        if debug { parts.append("debug") }
        if mountOverFiles { parts.append("nonempty") }
        if let syncthing { parts.append("syncthing=\(syncthing)") }  // the URL; never the key
        let extra = scratchPatterns.filter { !Self.defaultScratchPatterns.contains($0) }
        parts += extra.map { "scratch=\($0)" } + fuseOptions
        return parts.joined(separator: ",")
    }

    /// A configuration with the defaults.
    public init(mountPoint: String, syncDirectory: URL) {
        self.mountPoint = mountPoint
        self.syncDirectory = syncDirectory
    }
}
