import Foundation
import KVStore

/// What `kvfs get/set/rm/ls/status/wait` ask of a store. The command runs it on
/// the store it opened, or sends it to the daemon that holds the state
/// directory (``ControlSocket``), which runs the same ``perform(on:)``: so
/// the messages are the same, with a mount or without.
enum StoreRequest: Codable, Sendable {
    case get(key: StoreKey)
    case set(key: StoreKey, value: Data, type: String?)
    case remove(key: StoreKey)
    case list
    case status
    case retire(device: String, force: Bool, revoking: Bool)
    case export
    /// A property-list dictionary, checked by ``importable(_:)``.
    case `import`(document: Data)
    /// A key's versions, as a JSON array of ``HistoryLine``.
    case history(key: StoreKey)
    /// Writes a key's version, as `history` names it, as its new version.
    case restore(key: StoreKey, version: String)
    /// Writes the newest value a removed key had as its new version.
    case undelete(key: StoreKey)
    /// Prints the store's history retention; sets it first when either limit is given.
    case retention(days: Int?, bytes: Int?)
    /// The active devices that have not read this device's latest writes of
    /// `keys` (of every key when nil), one name a line: what `kvfs wait` waits on.
    case undelivered(keys: [StoreKey]?)

    /// The keys a successful request changed, whose cached files a mount must drop.
    var changedKeys: [StoreKey] {
        switch self {
        case let .set(key, _, _), let .remove(key), let .restore(key, _), let .undelete(key): [key]
        case let .import(document): Self.importedKeys(document)
        case .get, .list, .status, .retire, .export, .history, .retention, .undelivered: []
        }
    }

    /// Whether the request only reads the store: it is then opened read-only
    /// (nothing created or written, so a read-only sync directory serves).
    var onlyReads: Bool {
        switch self {
        case .get, .list, .status, .export, .history, .undelivered: true
        case let .retention(days, bytes): days == nil && bytes == nil
        case .set, .remove, .retire, .import, .restore, .undelete: false
        }
    }

    /// Runs the request: what the command prints, or why it failed.
    func perform(on store: DeviceStore) -> StoreReply {
        do {
            return StoreReply(output: try output(of: store))
        } catch {
            return StoreReply(failure: CommandError.from(error) ?? CommandError(String(describing: error)))
        }
    }

    private func output(of store: DeviceStore) throws -> Data {
        switch self {
        case let .get(key):
            try QuotaUsage.checkKey(key)
            guard let entry = store.entry(forKey: key) else { throw KVStoreError.noSuchKey(key) }
            return Data(entry.content)
        case let .set(key, value, type):
            if let type {
                try store.set(try Self.typedValue(value, as: type, key: key), forKey: key)
            } else {
                try store.setFileContent(Array(value), forKey: key)
            }
            return Data()
        case let .remove(key):
            guard store.entry(forKey: key) != nil else { throw KVStoreError.noSuchKey(key) }
            try store.removeValue(forKey: key)
            return Data()
        case .list:
            return Data(store.entries.keys.sorted().map { Self.listed($0) + "\n" }.joined().utf8)
        case .status:
            return Data(store.status().json().utf8)
        case let .retire(device, force, revoking):
            return Data((try store.retire(store.device(matching: device), force: force, revoking: revoking).description + "\n").utf8)
        case .export:
            return PropertyListValue.dictionary(store.values).exactXMLPropertyListData
        case let .import(document):
            try store.setValues(try Self.dictionary(in: document))
            return Data()
        case let .undelivered(keys):
            for key in keys ?? [] { try QuotaUsage.checkKey(key) }
            return Data(store.devicesLacking(latestWritesOf: keys).map { $0.name + "\n" }.joined().utf8)
        case .history, .restore, .undelete, .retention:
            return try historyOutput(of: store)
        }
    }

    /// `value` as a value of type `name`; a wrong type or value is one line.
    static func typedValue(_ value: Data, as name: String, key: StoreKey) throws -> PropertyListValue {
        guard let type = PropertyListType(rawValue: name) else {
            throw CommandError.usage("unknown type '\(name)'; use one of: \(PropertyListType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        switch type {
        case .data: return .data(value)
        case .array, .dictionary:
            let parsed = try FileForm.decode(Array(value), key: key, existingType: nil)
            guard parsed.type == type else { throw CommandError("the value is not an XML property list holding a \(name)") }
            return parsed
        default:
            let text = String(decoding: value, as: UTF8.self)
            guard let parsed = FileForm.parse(text.trimmingCharacters(in: .whitespacesAndNewlines), as: type) else {
                throw CommandError("'\(text)' is not a valid \(name)")
            }
            return parsed
        }
    }
}

/// A request's answer: what to print, or the failure.
struct StoreReply: Codable, Sendable {
    var output = Data()
    var failure: CommandError?
}

extension StoreRequest {
    /// A key as `kvfs ls` prints it, one a line: as it is, unless it holds a
    /// control character (a newline would split it, an escape sequence would
    /// reach the terminal); then in bash's `$'…'` quoting, which names it
    /// unambiguously and can be typed back (`kvfs get $'a\nb'`).
    static func listed(_ key: StoreKey) -> String {
        guard key.string.containsControlCharacters else { return key.string }
        var quoted = "$'"
        for scalar in key.string.unicodeScalars {
            switch scalar {
            case "\\": quoted += "\\\\"
            case "'": quoted += "\\'"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            case _ where scalar.isControlCharacter:
                quoted += scalar.value < 0x80 ? String(format: "\\x%02x", scalar.value) : String(format: "\\u%04x", scalar.value)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "'"
    }
}
