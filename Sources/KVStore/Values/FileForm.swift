import Foundation

/// A value's file form: what `cat` prints and `st_size` counts, and how the
/// bytes a writer leaves in a file are read back as a value (docs/files.md § Values and their files).
public enum FileForm {
    /// The file content that shows `value`.
    public static func encode(_ value: PropertyListValue) -> [UInt8] {
        switch value {
        case let .string(text): text.isEmpty ? [] : line(text)
        case let .integer(number): Array("\(number)\n".utf8)
        case let .real(number): Array("\(RealText.format(number))\n".utf8)
        case let .bool(flag): Array((flag ? "true\n" : "false\n").utf8)
        case let .date(date): Array("\(DateText.format(date))\n".utf8)
        case let .data(bytes): Array(bytes)
        case .array, .dictionary: Array(value.propertyListData(format: .xml))
        }
    }

    /// `text` and a newline, in one allocation (a commit makes one per write).
    private static func line(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 1)
        bytes += text.utf8
        bytes.append(0x0A)
        return bytes
    }

    /// The length of `value`'s file form: its size for quota and history,
    /// without making the bytes for a string or data (history sizes every
    /// version of a journal as it reads it).
    public static func size(of value: PropertyListValue) -> Int {
        switch value {
        case let .string(text): text.isEmpty ? 0 : text.utf8.count + 1
        case let .data(bytes): bytes.count
        default: encode(value).count
        }
    }

    /// Reads the content a writer left in a key's file as a value.
    ///
    /// - Parameters:
    ///   - content: the file's bytes at close or fsync.
    ///   - key: the key written, which a refusal names.
    ///   - existingType: the type the key holds now, or nil for a new key.
    /// - Throws: ``KVStoreError/invalidValue(key:reason:)`` (EINVAL) when the
    ///   content is a broken property list or does not parse as the key's type.
    public static func decode(_ content: [UInt8], key: StoreKey, existingType: PropertyListType?) throws(KVStoreError) -> PropertyListValue {
        if isPropertyListDocument(content) {
            do {
                return try PropertyListValue(propertyListData: Data(content))
            } catch {
                throw .invalidValue(key: key, reason: error.reason)
            }
        }
        switch existingType {
        case .integer?, .real?, .bool?, .date?:
            let text = String(decoding: content, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = parse(text, as: existingType!) else {
                throw .invalidValue(key: key, reason: "'\(text.prefix(40))' is not a valid \(existingType!.rawValue)")
            }
            return value
        case .data?:
            return .data(Data(content))
        default:
            // One trailing newline byte goes (not the last Character, which may be "\r\n").
            let text = content.last == 0x0A ? content.dropLast() : content[...]
            guard let string = String(validating: text, as: UTF8.self) else { return .data(Data(content)) }
            return .string(string)
        }
    }

    /// Parses trimmed text as a scalar of `type` (integer, real, bool, date or string).
    public static func parse(_ text: String, as type: PropertyListType) -> PropertyListValue? {
        switch type {
        case .integer: Int64(text).map(PropertyListValue.integer)
        case .real: RealText.parse(text).map(PropertyListValue.real)
        case .bool: BoolText.parse(text).map(PropertyListValue.bool)
        case .date: DateText.parse(text).map(PropertyListValue.date)
        case .string: .string(text)
        case .data, .array, .dictionary: nil
        }
    }

    /// Whether content is an XML or binary property-list document, by its first bytes.
    static func isPropertyListDocument(_ content: [UInt8]) -> Bool {
        if content.starts(with: binaryMagic) { return true }
        var start = 0
        if content.starts(with: byteOrderMark) { start = 3 }
        while start < content.count, content[start] == 0x20 || content[start] == 0x09 || content[start] == 0x0A || content[start] == 0x0D {
            start += 1
        }
        let head = content[start...]
        return xmlStarts.contains { head.starts(with: $0) }
    }

    /// What a binary property list, a UTF-8 byte order mark and an XML property list begin with
    /// (kept, not spelled out at each commit).
    private static let binaryMagic = Array("bplist00".utf8)
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let xmlStarts = ["<?xml", "<!DOCTYPE plist", "<plist"].map { Array($0.utf8) }
}
