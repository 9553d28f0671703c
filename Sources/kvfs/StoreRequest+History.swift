import Foundation
import KVStore

/// One version as `kvfs history` prints it (and `--json` gives it).
struct HistoryLine: Codable, Equatable {
    /// Its name, as `.kvfs/history/KEYFILE/` shows it and `kvfs restore` takes it.
    var version: String
    /// When it was written, in UTC to the millisecond.
    var time: String
    var device: String
    var deviceID: String
    /// `value` or `removal`.
    var kind: String
    /// The value's size in bytes as its file shows it (0 for a removal).
    var size: Int
    /// The value, short: its text up to ``shortLength`` characters, or what kind of value it is.
    var value: String
    var current: Bool
    /// Whether it lost to a concurrent write (filled by conflict detection).
    var lost: Bool
    /// The devices that have read it (filled by delivery; only for the current version).
    var deliveredTo: [String]?

    /// How many characters of a value a line shows.
    static let shortLength = 40

    init(_ version: KeyVersion, value: PropertyListValue?) {
        self.version = version.name
        time = VersionName.timeText(version.stamp.time)
        device = version.deviceName
        deviceID = version.deviceID.hex
        kind = version.isRemoval ? "removal" : "value"
        size = version.size
        self.value = value.map(Self.short) ?? "-"
        current = version.isCurrent
        lost = version.lost
        deliveredTo = version.deliveredTo
    }

    /// A value in a few characters, on one line: the text a file shows, or
    /// for data, arrays and dictionaries what they are.
    static func short(_ value: PropertyListValue) -> String {
        switch value {
        case let .data(bytes): return "<\(bytes.count) bytes of data>"
        case let .array(items): return "<array of \(items.count)>"
        case let .dictionary(entries): return "<dictionary of \(entries.count)>"
        default:
            var text = String(decoding: FileForm.encode(value), as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            text = StoreRequest.listed(StoreKey(text))  // a newline or an escape sequence never reaches the terminal as such
            return text.count > shortLength ? text.prefix(shortLength - 1) + "…" : text
        }
    }
}

extension StoreRequest {
    /// What `history`, `restore`, `undelete` and `retention` print.
    func historyOutput(of store: DeviceStore) throws -> Data {
        switch self {
        case let .history(key):
            try QuotaUsage.checkKey(key)
            let versions = store.history(forKey: key)
            guard !versions.isEmpty else { throw KVStoreError.noSuchKey(key) }
            let lines = versions.map { HistoryLine($0, value: try? store.value(of: $0)) }
            return try JSONEncoder().encode(lines)
        case let .restore(key, name):
            try QuotaUsage.checkKey(key)
            guard let version = store.version(named: name, ofKey: key) else {
                throw KVStoreError.noSuchVersion(key: key, reason: "its history holds no version '\(name)' (`kvfs history \(key)` lists them)")
            }
            try store.restore(version, forKey: key)
            return Data("\(key): restored \(version.name)\n".utf8)
        case let .undelete(key):
            let version = try store.undelete(key)
            return Data("\(key): restored \(version.name)\n".utf8)
        case let .retention(days, bytes):
            if days != nil || bytes != nil {
                let current = store.retention.isOff ? HistoryRetention.standard : store.retention
                try store.setRetention(HistoryRetention(days: days ?? current.days, bytes: bytes ?? current.bytes))
            }
            return Data("\(store.retention)\n".utf8)
        default:
            preconditionFailure("not a history request: \(self)")
        }
    }
}
