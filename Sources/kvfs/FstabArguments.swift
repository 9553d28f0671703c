/// Turns mount.fuse3's `SYNC_DIR MOUNTPOINT [-o OPTIONS]` into `mount MOUNTPOINT --sync-dir SYNC_DIR [-o OPTIONS]`.
enum FstabArguments {
    static let subcommands: Set<String> = ["mount", "unmount", "status", "get", "set", "rm", "ls", "changes", "help"]

    static func rewrite(_ arguments: [String]) -> [String] {
        guard arguments.count >= 2, let first = arguments.first, !first.hasPrefix("-"), !subcommands.contains(first),
              !arguments[1].hasPrefix("-") else { return arguments }
        return ["mount", arguments[1], "--sync-dir", first] + arguments.dropFirst(2)
    }
}
