/// A subcommand's options: `--flag` and `--name value`, nothing else.
struct Options {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Reads `arguments`: a `--name` followed by a word that is not an option takes it as its value.
    init(_ arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let name = String(arguments[index].drop { $0 == "-" })
            if index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") {
                values[name] = arguments[index + 1]
                index += 2
            } else {
                flags.insert(name)
                index += 1
            }
        }
    }

    /// The names of every option given, flags and options with values.
    var names: Set<String> { flags.union(values.keys) }

    /// Whether `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name`, or `fallback`.
    func value<T: LosslessStringConvertible>(_ name: String, default fallback: T) throws -> T {
        guard let text = values[name] else { return fallback }
        guard let value = T(text) else { throw OptionError(message: "--\(name) \(text): not a \(T.self)") }
        return value
    }
}

/// A bad option.
struct OptionError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
