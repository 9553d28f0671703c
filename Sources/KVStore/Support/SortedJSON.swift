import Foundation

/// Small JSON documents with their keys in order, for files other programs
/// and people read (`writer.json`, `progress.json`).
enum SortedJSON {
    /// `value` as compact JSON, keys sorted by their UTF-8 bytes.
    ///
    /// Through `JSONEncoder`, not `JSONSerialization`: the latter's
    /// `.sortedKeys` compares keys through a locale, which loads ICU's
    /// collation data into the process, 3 MB of a daemon's memory.
    static func text(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }
}
