import ArgumentParser
import Foundation
import KVStore

/// The `kvfs` command: a thin layer over the KVStore and KVFileSystem modules.
struct KVFS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvfs",
        abstract: "NSUbiquitousKeyValueStore for Linux: a quota-limited key-value store as a filesystem, kept in step across machines.",
        discussion: """
            Each key is a file at the mount point, its content the key's value. Without --sync-dir the \
            default store ($XDG_DATA_HOME/kvfs/default) serves. fstab and `mount -t fuse.kvfs SYNC_DIR \
            MOUNTPOINT` run `kvfs SYNC_DIR MOUNTPOINT -o OPTIONS`, which means `kvfs mount`. \
            \(ExitStatus.documentation)
            """,
        version: "kvfs \(KVFSVersion.description)",
        subcommands: [
            MountCommand.self, UnmountCommand.self, StatusCommand.self,
            GetCommand.self, SetCommand.self, RemoveCommand.self, ListCommand.self, ChangesCommand.self,
            DevicesCommand.self, RetireCommand.self,
        ]
    )

    /// Parses and runs a command line; a failure is one line on standard
    /// error and the exit status ``ExitStatus`` documents.
    static func run(_ arguments: [String]) -> Never {
        DaemonLog.bootstrap()
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            exit(withError: nil)
        } catch {
            guard let failure = CommandError.from(error) else { exit(withError: error) }  // help, usage, ExitCode
            FileHandle.standardError.write(Data("Error: \(failure.description)\n".utf8))
            Foundation.exit(failure.exitStatus)
        }
    }
}

/// `--sync-dir` and `--state-dir`, shared by the commands that open a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("sync-dir"), help: "The shared sync directory (default: $XDG_DATA_HOME/kvfs/default).")
    var syncDirectory: String?

    @Option(name: .customLong("state-dir"), help: "This device's state directory (default: under $XDG_STATE_HOME/kvfs/).")
    var stateDirectory: String?

    /// The sync directory named, or the default store's.
    var syncURL: URL { syncDirectory.map { URL(fileURLWithPath: $0) } ?? DeviceStore.defaultSyncDirectory }

    /// The state directory named, or the default one for the sync directory.
    var stateURL: URL { stateDirectory.map { URL(fileURLWithPath: $0) } ?? DeviceStore.defaultStateDirectory(for: syncURL) }
}
