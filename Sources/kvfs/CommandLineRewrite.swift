/// The two command-line forms swift-argument-parser cannot take as they are.
enum CommandLineRewrite {
    /// Every command's name, and `help`: a first argument that is none of these is a sync directory.
    static let subcommands = Set(KVFS.configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"])

    static func rewrite(_ arguments: [String]) -> [String] {
        negativeValueLast(fstabForm(arguments))
    }

    /// Turns mount.fuse3's `SYNC_DIR MOUNTPOINT [-o OPTIONS]` into `mount MOUNTPOINT --sync-dir SYNC_DIR [-o OPTIONS]`.
    static func fstabForm(_ arguments: [String]) -> [String] {
        guard arguments.count >= 2, let first = arguments.first, !first.hasPrefix("-"), !subcommands.contains(first),
              !arguments[1].hasPrefix("-") else { return arguments }
        return ["mount", arguments[1], "--sync-dir", first] + arguments.dropFirst(2)
    }

    /// `kvfs set t -5`: a negative number is the value, not an option. It
    /// moves behind `--`, where the parser takes it as the value argument.
    static func negativeValueLast(_ arguments: [String]) -> [String] {
        guard arguments.first == "set", !arguments.contains("--") else { return arguments }
        let takesValue: Set<String> = ["--type", "--store", "--sync-dir", "--state-dir"]
        var rest = Array(arguments.dropFirst())
        for index in rest.indices where isNegativeNumber(rest[index]) && (index == 0 || !takesValue.contains(rest[index - 1])) {
            let value = rest.remove(at: index)
            return ["set"] + rest + ["--", value]
        }
        return arguments
    }

    private static func isNegativeNumber(_ argument: String) -> Bool {
        argument.count > 1 && argument.hasPrefix("-") && Double(argument) != nil
    }
}
