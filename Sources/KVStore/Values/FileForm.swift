import Foundation

/// A value's file form: what `cat` prints and `st_size` counts, and how the
/// bytes a writer leaves in a file are read back as a value (SPEC "Values").
public enum FileForm {
    /// The file content that shows `value`.
    public static func encode(_ value: PropertyListValue) -> [UInt8] {
        switch value {
        case let .string(text): text.isEmpty ? [] : Array((text + "\n").utf8)
        case let .integer(number): Array("\(number)\n".utf8)
        case let .real(number): Array("\(RealText.format(number))\n".utf8)
        case let .bool(flag): Array((flag ? "true\n" : "false\n").utf8)
        case let .date(date): Array("\(DateText.format(date))\n".utf8)
        case let .data(bytes): Array(bytes)
        case .array, .dictionary: Array(value.propertyListData(format: .xml))
        }
    }

    /// Reads the content a writer left in a key's file as a value.
    ///
    /// - Parameters:
    ///   - content: the file's bytes at close or fsync.
    ///   - existingType: the type the key holds now, or nil for a new key.
    /// - Throws: ``KVStoreError/invalidValue(key:reason:)`` (EINVAL) when the
    ///   content is a broken property list or does not parse as the key's type.
    public static func decode(_ content: [UInt8], key: String, existingType: PropertyListType?) throws(KVStoreError) -> PropertyListValue {
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
            guard var text = String(validating: content, as: UTF8.self) else { return .data(Data(content)) }
            if text.utf8.last == 0x0A { text.removeLast() }
            return .string(text)
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
        if content.starts(with: Array("bplist00".utf8)) { return true }
        var start = 0
        if content.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < content.count, [0x20, 0x09, 0x0A, 0x0D].contains(content[start]) { start += 1 }
        let head = content[start...]
        return ["<?xml", "<!DOCTYPE plist", "<plist"].contains { head.starts(with: Array($0.utf8)) }
    }
}

/// Reals as text: the shortest decimal that reads back the same; `nan`, `inf`, `-inf`.
enum RealText {
    static func format(_ number: Double) -> String {
        number.isNaN ? "nan" : number.description
    }

    static func parse(_ text: String) -> Double? {
        switch text.lowercased() {
        case "nan": .nan
        case "inf", "+inf", "infinity": .infinity
        case "-inf", "-infinity": -.infinity
        default: Double(text)
        }
    }
}

/// Booleans as text: written `true`/`false`; read from true/false/yes/no/1/0 in any case.
enum BoolText {
    static func parse(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "1": true
        case "false", "no", "0": false
        default: nil
        }
    }
}

/// Dates as ISO 8601 text in UTC, with a fraction of a second only when it is not zero.
public enum DateText {
    /// `2026-11-22T10:15:02Z`, or `2026-11-22T10:15:02.345Z` with milliseconds.
    public static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = Int(interval.rounded(.down))
        var millis = Int(((interval - Double(seconds)) * 1000).rounded())
        if millis == 1000 { seconds += 1; millis = 0 }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d",
                          Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                          Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        if millis != 0 {
            var fraction = String(format: "%03d", millis)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    /// Reads `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff]]` with `Z`, `±HH:MM` or no zone (UTC).
    public static func parse(_ text: String) -> Date? {
        let scalars = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[index..<index + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += digits
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < scalars.count, scalars[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offset = 0
        if index < scalars.count {
            guard expect(0x54) || expect(0x20), let h = number(2), expect(0x3A), let m = number(2),
                  h < 24, m < 60 else { return nil }
            hour = h; minute = m
            if expect(0x3A) {
                guard let s = number(2), s < 61 else { return nil }
                second = s
                if expect(0x2E) || expect(0x2C) {
                    var scale = 0.1
                    let start = index
                    while index < scalars.count, (0x30...0x39).contains(scalars[index]) {
                        fraction += Double(scalars[index] - 0x30) * scale
                        scale /= 10
                        index += 1
                    }
                    if index == start { return nil }
                }
            }
            if expect(0x5A) {
            } else if index < scalars.count {
                let sign = scalars[index] == 0x2D ? -1 : 1
                guard expect(0x2B) || expect(0x2D), let oh = number(2) else { return nil }
                _ = expect(0x3A)
                guard let om = number(2) else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            }
        }
        guard index == scalars.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }
}
