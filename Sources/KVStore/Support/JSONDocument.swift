import Foundation

/// The store's own JSON files (`writer.json`, `progress.json`, `device.json`,
/// `adoptions.json`) and the change log's lines: each is a Codable type,
/// written and read through here.
enum JSONDocument {
    /// `value` as compact JSON with its keys sorted by their UTF-8 bytes, so
    /// that every device and every version writes a document in the same bytes.
    ///
    /// Through `JSONEncoder`, not `JSONSerialization`: the latter's
    /// `.sortedKeys` compares keys through a locale, which loads ICU's
    /// collation data into the process, 3 MB of a daemon's memory.
    static func sorted(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    /// The `type` document that `bytes` hold, or nil when they hold none.
    static func decoded<T: Decodable>(_ type: T.Type, from bytes: some Sequence<UInt8>) -> T? {
        try? JSONDecoder().decode(type, from: Data(bytes))
    }
}
