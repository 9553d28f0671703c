import ArgumentParser

/// The `kvfs` command: a thin layer over the KVStore and KVFileSystem modules.
struct KVFS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvfs",
        abstract: "NSUbiquitousKeyValueStore for Linux: a quota-limited key-value store as a filesystem, kept in step across machines.",
        subcommands: [
            MountCommand.self, UnmountCommand.self, StatusCommand.self,
            GetCommand.self, SetCommand.self, RemoveCommand.self, ListCommand.self, ChangesCommand.self,
        ]
    )
}

/// `--sync-dir` and `--state-dir`, shared by the commands that open a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("sync-dir"), help: "The shared sync directory (default: $XDG_DATA_HOME/kvfs/default).")
    var syncDirectory: String?

    @Option(name: .customLong("state-dir"), help: "This device's state directory (default: under $XDG_STATE_HOME/kvfs/).")
    var stateDirectory: String?
}
