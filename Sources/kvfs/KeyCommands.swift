import ArgumentParser
import Foundation
import KVStore

/// `kvfs get KEY`: prints a key's file form, as `cat` on a mount would.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Print a key's value.")
    @Argument(help: "The key.") var key: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        FileHandle.standardOutput.write(try StoreAccess.perform(.get(key: StoreKey(key)), store))
    }
}

/// `kvfs set KEY VALUE [--type TYPE]`: writes a key as `echo VALUE > KEY` would, or as the given type.
struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set a key's value.",
        discussion: """
            Without --type the value is read as a write to the key's file is: a key that holds an integer, \
            real, bool or date keeps its type; otherwise it becomes a string. With --type it becomes that type \
            (array and dictionary take an XML property list). A value of - reads the value from standard input \
            (`kvfs set k - < file`), so the value - itself is given that way: `printf %s - | kvfs set k -`; a \
            script that sets values it has not chosen passes each so. A negative number needs no -- (`kvfs set t -5`).
            """)
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value, as text; - reads it from standard input.") var value: String
    @Option(help: "string, integer, real, bool, date, data, array or dictionary.") var type: String?
    @OptionGroup var store: StoreOptions

    func run() throws {
        let content = value == "-" ? FileHandle.standardInput.readDataToEndOfFile() : Data(value.utf8)
        _ = try StoreAccess.perform(.set(key: StoreKey(key), value: content, type: type), store)
    }
}

/// `kvfs rm KEY`: removes a key.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a key.")
    @Argument(help: "The key.") var key: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        _ = try StoreAccess.perform(.remove(key: StoreKey(key)), store)
    }
}

/// `kvfs ls`: prints every key, one a line, sorted.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List the keys.",
        discussion: """
            One key a line, in UTF-8 byte order, as it is, unless it holds a control character (a newline would \
            split it, an escape sequence would reach the terminal): then in bash's $'...' quoting, which the \
            shell turns back into the key (`kvfs get $'two\\nlines'`).
            """)
    @OptionGroup var store: StoreOptions

    func run() throws {
        FileHandle.standardOutput.write(try StoreAccess.perform(.list, store))
    }
}
