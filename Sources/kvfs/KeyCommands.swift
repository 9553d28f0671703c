import ArgumentParser
import Foundation
import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// `kvfs get KEY`: prints a key's file form, as `cat` on a mount would.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Print a key's value.")
    @Argument(help: "The key.") var key: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        let access = try StoreAccess.open(store)
        defer { access.close() }
        let content: [UInt8]
        switch access {
        case let .direct(store):
            try QuotaUsage.checkKey(key)
            guard let entry = store.entry(forKey: key) else { throw KVStoreError.noSuchKey(key) }
            content = entry.content
        case let .mounted(mountPoint):
            let path = try StoreAccess.path(mountPoint, key)
            guard let data = FileManager.default.contents(atPath: path) else { throw KVStoreError.noSuchKey(key) }
            content = Array(data)
        }
        FileHandle.standardOutput.write(Data(content))
    }
}

/// `kvfs set KEY VALUE [--type TYPE]`: writes a key as `echo VALUE > KEY` would, or as the given type.
struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set a key's value.",
        discussion: "Without --type the value is read as a write to the key's file is: a key that holds an integer, real, bool or date keeps its type; otherwise it becomes a string. With --type it becomes that type (array and dictionary take an XML property list).")
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value, as text.") var value: String
    @Option(help: "string, integer, real, bool, date, data, array or dictionary.") var type: String?
    @OptionGroup var store: StoreOptions

    func run() throws {
        let typed = try type.map(typedValue)
        let access = try StoreAccess.open(store)
        defer { access.close() }
        switch access {
        case let .direct(store):
            if let typed { try store.set(typed, forKey: key) } else { try store.setFileContent(Array(value.utf8), forKey: key) }
        case let .mounted(mountPoint):
            let content = typed.map { Array($0.propertyListData(format: .binary)) } ?? Array(value.utf8)
            try writeInPlace(content, to: try StoreAccess.path(mountPoint, key))
        }
    }

    /// The value as `type`; a wrong type or value is one line (CommandError), not a usage message.
    private func typedValue(_ name: String) throws -> PropertyListValue {
        guard let type = PropertyListType(rawValue: name) else {
            throw CommandError("unknown type '\(name)'; use one of: \(PropertyListType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        switch type {
        case .data: return .data(Data(value.utf8))
        case .array, .dictionary:
            let parsed = try FileForm.decode(Array(value.utf8), key: key, existingType: nil)
            guard parsed.type == type else { throw CommandError("the value is not an XML property list holding a \(name)") }
            return parsed
        default:
            guard let parsed = FileForm.parse(value.trimmingCharacters(in: .whitespacesAndNewlines), as: type) else {
                throw CommandError("'\(value)' is not a valid \(name)")
            }
            return parsed
        }
    }

    /// Writes a key's file in place, as `echo VALUE > KEY` does, so the mount
    /// reads the content back by its rules (a key keeps its type) and a
    /// refusal at close() is reported. (`FileManager.createFile` writes a
    /// temporary file and renames it over the key: the key lost its type,
    /// took any text, and a temporary key came and went.)
    private func writeInPlace(_ content: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw CommandError.system("cannot write", path) }
        var written = 0
        while written < content.count {
            let count = content[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let error = CommandError.system("cannot write", path)
                Glibc.close(fd)
                throw error
            }
            written += count
        }
        guard Glibc.close(fd) == 0 else { throw CommandError.system("cannot write", path) }
    }
}

/// `kvfs rm KEY`: removes a key.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a key.")
    @Argument(help: "The key.") var key: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        let access = try StoreAccess.open(store)
        defer { access.close() }
        switch access {
        case let .direct(store):
            guard store.entry(forKey: key) != nil else { throw KVStoreError.noSuchKey(key) }
            try store.removeValue(forKey: key)
        case let .mounted(mountPoint):
            let path = try StoreAccess.path(mountPoint, key)
            if unlink(path) != 0 { throw errno == ENOENT ? KVStoreError.noSuchKey(key) : CommandError.system("cannot remove", path) }
        }
    }
}

/// `kvfs ls`: prints every key, one a line, sorted.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the keys.")
    @OptionGroup var store: StoreOptions

    func run() throws {
        let access = try StoreAccess.open(store)
        defer { access.close() }
        let keys: [String]
        switch access {
        case let .direct(store):
            keys = Array(store.entries.keys)
        case let .mounted(mountPoint):
            keys = try FileManager.default.contentsOfDirectory(atPath: mountPoint).compactMap(FileName.decode)
        }
        for key in keys.sorted() { print(key) }
    }
}
