import ArgumentParser
import Foundation
import KVStore

/// The `kvfs` command: a thin layer over the KVStore and KVFileSystem modules.
struct KVFS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvfs",
        abstract: "NSUbiquitousKeyValueStore for Linux: a quota-limited key-value store as a filesystem, kept in step across machines.",
        discussion: """
            Each key is a file at the mount point, its content the key's value. Each store is the folder its \
            identifier names (com.example.notes: letters, digits, '-', '_' and '.') in the sync root \
            $XDG_DATA_HOME/kvfs/, which a synchronizer shares whole; --store ID opens one, --sync-dir DIR a store \
            folder by path, and without either the default store ($XDG_DATA_HOME/kvfs/default) serves. fstab and \
            `mount -t fuse.kvfs SYNC_DIR MOUNTPOINT` run `kvfs SYNC_DIR MOUNTPOINT -o OPTIONS`, which means \
            `kvfs mount` (with -o store=ID, SYNC_DIR is the root that holds the store). \
            The commands that open a store work without a mount, through the same quota and journal: while a \
            mount holds the state directory they ask its daemon (control.sock in the state directory), else \
            they open the store as one more process of the machine's device, with the same messages either \
            way. get, ls, status, export, stores, history and retention (printing) open it read-only and write \
            nothing. Only --device-name renames a device (a name is 1 to 64 characters, no control \
            characters); otherwise it keeps the name it has, the host name when new. After `kvfs unmount` a \
            command that needs the state directory waits for the daemon's last commits. Errors are one line \
            naming what failed and what to do. \
            \(ExitStatus.documentation)
            """,
        version: "kvfs \(KVFSVersion.description)",
        subcommands: [
            MountCommand.self, UnmountCommand.self, StatusCommand.self,
            GetCommand.self, SetCommand.self, RemoveCommand.self, ListCommand.self, ChangesCommand.self,
            DevicesCommand.self, RetireCommand.self, StoresCommand.self, ExportCommand.self, ImportCommand.self,
            HistoryCommand.self, RestoreCommand.self, UndeleteCommand.self, RetentionCommand.self, WaitCommand.self,
            SealCommand.self, PairCommand.self, JoinCommand.self, RecoveryKeyCommand.self, InspectCommand.self,
            BucketCommand.self, SyncCommand.self,
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

/// `--store`, `--sync-dir` and `--state-dir`, shared by the commands that open a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("store"), help: ArgumentHelp("The store, by its identifier, in $XDG_DATA_HOME/kvfs/ (default: default; `kvfs stores` lists them).", valueName: "id"))
    var storeIdentifier: String?

    @Option(name: .customLong("sync-dir"), help: "A store's folder, by path, instead of --store (default: $XDG_DATA_HOME/kvfs/default).")
    var syncDirectory: String?

    @Option(name: .customLong("state-dir"), help: "This device's state directory (default: under $XDG_STATE_HOME/kvfs/).")
    var stateDirectory: String?

    /// The store --store names, if any; a bad identifier, or --store with --sync-dir, is a usage error.
    var store: StoreIdentifier? {
        get throws {
            guard let storeIdentifier else { return nil }
            guard syncDirectory == nil else {
                throw CommandError.usage("--store and --sync-dir name a store each; give one (--store ID for a store in $XDG_DATA_HOME/kvfs/, --sync-dir DIR for a folder)")
            }
            do throws(InvalidStoreIdentifier) { return try StoreIdentifier(storeIdentifier) } catch { throw CommandError.usage(error.description) }
        }
    }

    /// The sync directory named, the folder of the store named, or the default store's.
    var syncURL: URL {
        get throws {
            if let store = try store { return StoreRoot.default.folder(of: store) }
            return syncDirectory.map { URL(fileURLWithPath: $0) } ?? DeviceStore.defaultSyncDirectory
        }
    }

    /// The state directory named, or the default one for the sync directory.
    var stateURL: URL {
        get throws { try stateDirectory.map { URL(fileURLWithPath: $0) } ?? DeviceStore.defaultStateDirectory(for: syncURL) }
    }
}
