import ArgumentParser
import Foundation
import KVStore

/// `kvfs export`: the store as one XML property-list dictionary on standard output.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Print the store as one XML property-list dictionary.",
        discussion: """
            Every key and its value, bit for bit. The document is one Apple's and Python's property-list parsers \
            read (dates to the second, every NaN as nan); where that text loses bits (a date's fraction of a \
            second, a NaN's sign and payload) the element also carries them in an `exact` attribute, which those \
            parsers ignore and `kvfs import` reads back. `kvfs export --store A | kvfs import --store B` copies \
            store A's keys into B; `kvfs export > backup.plist` makes a backup.
            """)
    @OptionGroup var store: StoreOptions

    func run() throws {
        FileHandle.standardOutput.write(try StoreAccess.perform(.export, store))
    }
}

/// `kvfs import [FILE|-]`: writes a property-list dictionary's keys into the store, all or nothing.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Write the keys of a property-list dictionary into the store, all or nothing.",
        discussion: """
            The document (XML, as `kvfs export` writes it, or binary) holds one dictionary; each of its keys is \
            set to its value, bit for bit, and the store's other keys stay. Every key and value, and the quota \
            for all of them together, is checked before anything is written: if any is refused, nothing changes \
            and the first reason (keys in byte order) is the error. The keys are written in one step, one \
            record of the journal, so every reader (other devices, a crash) sees all of them or none; through \
            the store's mount when one holds it.
            """)
    @Argument(help: "The property list to read; - or none reads standard input.") var file: String?
    @OptionGroup var store: StoreOptions

    func run() throws {
        let document: Data
        if let file, file != "-" {
            guard let contents = FileManager.default.contents(atPath: file) else { throw CommandError.system("cannot read", file) }
            document = contents
        } else {
            document = FileHandle.standardInput.readDataToEndOfFile()
        }
        _ = try StoreAccess.perform(.import(document: try StoreRequest.importable(document)), store)
    }
}

extension StoreRequest {
    /// The most bytes of an import's document sent to a daemon: far more than
    /// any dictionary within the quota takes in the binary form it is sent in,
    /// and, as JSON, well within a control-socket message.
    static let largestImport = ControlSocket.maximumMessage / 2

    /// `document` as the import request carries it: its dictionary, checked
    /// here (so that a document that is no dictionary is refused before the
    /// store is opened) and in the binary form, which keeps every bit in a
    /// few bytes.
    static func importable(_ document: Data) throws -> Data {
        let dictionary = try Self.dictionary(in: document)
        let binary = PropertyListValue.dictionary(dictionary).propertyListData(format: .binary)
        guard binary.count <= largestImport else {
            throw CommandError("the document holds \(binary.count) bytes of keys and values, more than a store can hold "
                               + "(\(Limits.maxKeys) keys, \(Limits.maxTotalBytes) bytes of values)")
        }
        return binary
    }

    /// The dictionary a property-list document holds; anything else is refused in one line.
    static func dictionary(in document: Data) throws -> [StoreKey: PropertyListValue] {
        let value: PropertyListValue
        do throws(PropertyListDecodingError) {
            value = try PropertyListValue(propertyListData: document)
        } catch {
            throw CommandError("cannot import: \(error.reason)")
        }
        guard case let .dictionary(entries) = value else {
            throw CommandError("cannot import: the property list holds one value of type \(value.type.rawValue), not a dictionary of keys and values")
        }
        return entries
    }

    /// The keys of an import's document, for the mount to drop their cached files.
    static func importedKeys(_ document: Data) -> [StoreKey] {
        Array(((try? dictionary(in: document)) ?? [:]).keys)
    }
}
