/// Writes a value as an XML property list in Apple's layout (the prolog and
/// DOCTYPE, tab indentation, `<array/>` for an empty array), deterministic:
/// dictionary keys in byte order, so one value has one file form.
///
/// It is the file form of arrays and dictionaries, which people read with
/// Apple's (CoreFoundation, `plutil`), Python's (`plistlib`) and libplist's
/// tools, so it writes what all of those parsers read: dates to the second,
/// rounded down as CoreFoundation does (``DateText/Precision/seconds``), and
/// reals as CoreFoundation spells them (``RealText/Spelling/propertyList``:
/// the shortest decimal that reads back the same bits, `+infinity`,
/// `-infinity`, and every NaN as `nan`). So a date's fraction of a second and
/// a NaN's sign and payload are what this form does not keep; the store, the
/// journal and the binary form do.
///
/// In strings, `&`, `<`, `>`, the carriage return (which XML parsers turn into
/// a line feed) and the characters XML 1.0 has no room for (control characters
/// other than tab and line feed, U+FFFE, U+FFFF) are written as character
/// references. No XML 1.0 parser takes those last ones in any spelling:
/// plistlib refuses the document (and refuses to write such a string), while
/// CoreFoundation, libplist and kvfs read the references. A reference is the
/// least bad choice: Apple writes them raw, which those parsers refuse too, and
/// raw escape characters would reach the terminal of whoever runs `cat`.
///
/// With `exact`, a real or date whose text loses bits also carries them in an
/// attribute that other parsers ignore (``ExactSpelling``): what `kvfs export` writes.
enum XMLPropertyListWriter {
    static func document(_ value: PropertyListValue, exact: Bool = false) -> [UInt8] {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """
        write(value, indent: 0, exact: exact, into: &text)
        text += "</plist>\n"
        return Array(text.utf8)
    }

    private static func write(_ value: PropertyListValue, indent: Int, exact: Bool, into text: inout String) {
        let tabs = String(repeating: "\t", count: indent)
        let attribute = exact ? ExactSpelling.attribute(for: value).map { " \(ExactSpelling.attribute)=\"\($0)\"" } ?? "" : ""
        switch value {
        case let .string(string): text += tabs + "<string>" + escaped(string) + "</string>\n"
        case let .integer(number): text += tabs + "<integer>\(number)</integer>\n"
        case let .real(number): text += tabs + "<real\(attribute)>" + RealText.format(number, spelling: .propertyList) + "</real>\n"
        case let .bool(flag): text += tabs + (flag ? "<true/>\n" : "<false/>\n")
        case let .date(date): text += tabs + "<date\(attribute)>" + DateText.format(date, precision: .seconds) + "</date>\n"
        case let .data(bytes): text += tabs + "<data>" + Base64.encode(Array(bytes)) + "</data>\n"
        case let .array(elements):
            guard !elements.isEmpty else { text += tabs + "<array/>\n"; return }
            text += tabs + "<array>\n"
            for element in elements { write(element, indent: indent + 1, exact: exact, into: &text) }
            text += tabs + "</array>\n"
        case let .dictionary(entries):
            guard !entries.isEmpty else { text += tabs + "<dict/>\n"; return }
            text += tabs + "<dict>\n"
            for (key, element) in entries.sorted(by: { $0.key < $1.key }) {
                text += tabs + "\t<key>" + escaped(key.string) + "</key>\n"
                write(element, indent: indent + 1, exact: exact, into: &text)
            }
            text += tabs + "</dict>\n"
        }
    }

    private static func escaped(_ string: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(string.unicodeScalars.count)
        for scalar in string.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0xFFFE || scalar.value == 0xFFFF: result += "&#x" + String(scalar.value, radix: 16, uppercase: true) + ";"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// Base64 (RFC 4648, padded) for `<data>`: written on one line; read
/// ignoring white space anywhere, as Apple's parsers do.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group: UInt32 = 0
            for offset in 0..<3 { group = group << 8 | UInt32(offset < count ? bytes[index + offset] : 0) }
            for position in 0..<4 {
                out.append(position <= count ? alphabet[Int(group >> (18 - 6 * UInt32(position)) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or nil when the text holds anything but the alphabet, white
    /// space and trailing padding, or stops in the middle of a byte.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var group: UInt32 = 0, filled = 0, padding = 0
        for byte in text {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "="): padding += 1
            default:
                let value = values[Int(byte)]
                guard value != 0xFF, padding == 0 else { return nil }
                group = group << 6 | UInt32(value)
                filled += 1
                if filled == 4 {
                    out += [UInt8(group >> 16 & 0xFF), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
                    group = 0
                    filled = 0
                }
            }
        }
        switch filled {
        case 0: guard padding == 0 else { return nil }
        case 2: out.append(UInt8(group >> 4 & 0xFF)); guard padding == 0 || padding == 2 else { return nil }
        case 3: out += [UInt8(group >> 10 & 0xFF), UInt8(group >> 2 & 0xFF)]; guard padding == 0 || padding == 1 else { return nil }
        default: return nil
        }
        return out
    }
}
