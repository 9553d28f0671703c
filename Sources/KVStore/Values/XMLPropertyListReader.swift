import Foundation

/// Reads an XML property list within ``DecodingLimits``, accepting what Apple's
/// tools and people write: a BOM, the XML declaration, a DOCTYPE (with or
/// without an internal subset), comments and processing instructions between
/// elements and inside text, attributes, CDATA sections, the five predefined
/// entities and numeric character references, `<string/>` and other empty
/// forms, integers in decimal or `0x` hex with white space around them,
/// base64 data with white space anywhere, and a document whose top element is
/// the value itself rather than `<plist>`.
///
/// No entity is ever defined by the document (a DOCTYPE is skipped, not
/// obeyed), so text cannot expand; every byte is looked at a bounded number of
/// times, so time is linear in the document's size.
enum XMLPropertyListReader {
    static func value(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(PropertyListDecodingError) -> PropertyListValue {
        var parser = Parser(bytes: bytes, budget: DecodingBudget(limits))
        return try parser.document()
    }
}

private struct Parser {
    let bytes: UnsafeRawBufferPointer
    var budget: DecodingBudget
    var index = 0

    init(bytes: UnsafeRawBufferPointer, budget: DecodingBudget) {
        self.bytes = bytes
        self.budget = budget
    }

    /// An opening tag: its name, whether it closed itself (`<true/>`), and its
    /// `exact` attribute (``ExactSpelling``), the one attribute kvfs reads.
    struct Tag {
        var name: String
        var isEmpty: Bool
        var exact: String?
    }

    func fail(_ reason: String) -> PropertyListDecodingError {
        var line = 1
        for byte in bytes[..<min(index, bytes.count)] where byte == 0x0A { line += 1 }
        return PropertyListDecodingError(reason: "not a valid XML property list (\(reason), line \(line))")
    }

    mutating func document() throws(PropertyListDecodingError) -> PropertyListValue {
        if starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        try skipMarkup()
        let tag = try openTag()
        let value: PropertyListValue
        if tag.name == "plist" {
            guard !tag.isEmpty else { throw fail("an empty <plist/>") }
            try skipMarkup()
            value = try self.value(try openTag(), depth: 0)
            try skipMarkup()
            try closeTag("plist")
        } else {
            value = try self.value(tag, depth: 0)
        }
        try skipMarkup()
        guard index == bytes.count else { throw fail("more after the property list") }
        return value
    }

    // MARK: Values

    /// The value that the element opened by `tag` holds, its closing tag consumed.
    mutating func value(_ tag: Tag, depth: Int) throws(PropertyListDecodingError) -> PropertyListValue {
        try budget.spend()
        switch tag.name {
        case "array":
            try budget.enter(depth: depth + 1)
            var elements: [PropertyListValue] = []
            if tag.isEmpty { return .array(elements) }
            while let child = try nextChild(closing: "array") {
                elements.append(try value(child, depth: depth + 1))
            }
            return .array(elements)
        case "dict":
            try budget.enter(depth: depth + 1)
            var entries: [StoreKey: PropertyListValue] = [:]
            if tag.isEmpty { return .dictionary(entries) }
            while let keyTag = try nextChild(closing: "dict") {
                guard keyTag.name == "key" else { throw fail("<\(keyTag.name)> where a <key> belongs") }
                let key = try string(keyTag)
                try budget.spend(bytes: key.utf8.count)
                try skipMarkup()
                let valueTag = try openTag()
                guard valueTag.name != "key" else { throw fail("a <key> with no value") }
                // The same key again replaces the value, as CoreFoundation's readers do.
                entries[StoreKey(key)] = try value(valueTag, depth: depth + 1)
            }
            return .dictionary(entries)
        case "string":
            let text = try string(tag)
            try budget.spend(bytes: text.utf8.count)
            return .string(text)
        case "true", "false":
            if !tag.isEmpty { try closeTag(tag.name) }
            return .bool(tag.name == "true")
        case "integer":
            return .integer(try parsed(tag) { Self.integer($0) })
        case "real":
            return ExactSpelling.value(.real(try parsed(tag) { RealText.parse($0) }), exact: tag.exact)
        case "date":
            return ExactSpelling.value(.date(try parsed(tag) { DateText.parse($0) }), exact: tag.exact)
        case "data":
            let text = tag.isEmpty ? [] : try content(closing: "data")
            guard let data = Base64.decode(text) else { throw fail("<data> that is not base64") }
            try budget.spend(bytes: data.count)
            return .data(Data(data))
        default:
            throw fail("unknown element <\(tag.name)>")
        }
    }

    /// The next element inside a container, or nil at the container's closing tag.
    mutating func nextChild(closing name: String) throws(PropertyListDecodingError) -> Tag? {
        try skipMarkup()
        if starts(with: Array("</".utf8)) {
            try closeTag(name)
            return nil
        }
        return try openTag()
    }

    mutating func string(_ tag: Tag) throws(PropertyListDecodingError) -> String {
        if tag.isEmpty { return "" }
        let text = try content(closing: tag.name)
        guard let string = String(validating: text, as: UTF8.self) else { throw fail("text that is not UTF-8") }
        return string
    }

    /// A scalar from its element's text, white space around it ignored.
    mutating func parsed<T>(_ tag: Tag, _ parse: (String) -> T?) throws(PropertyListDecodingError) -> T {
        guard !tag.isEmpty else { throw fail("an empty <\(tag.name)>") }
        let text = String(decoding: try content(closing: tag.name), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = parse(text) else { throw fail("'\(text.prefix(40))' is not a valid <\(tag.name)>") }
        return value
    }

    /// Decimal or `0x` hexadecimal, with an optional sign and white space after
    /// it (as Apple reads it); nil past the signed 64-bit range.
    static func integer(_ text: String) -> Int64? {
        var digits = Substring(text)
        let negative = digits.hasPrefix("-")
        if negative || digits.hasPrefix("+") { digits = digits.dropFirst().drop { $0 == " " || $0 == "\t" } }
        var radix = 10
        if digits.lowercased().hasPrefix("0x") { digits = digits.dropFirst(2); radix = 16 }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isHexDigit && (radix == 16 || $0.isNumber) }),
              let magnitude = UInt64(digits, radix: radix) else { return nil }
        return negative ? (magnitude <= 1 << 63 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil) : Int64(exactly: magnitude)
    }

    // MARK: Text

    /// The text of an element up to its closing tag `</name>` (consumed), with
    /// references resolved, CDATA taken as it is, and comments left out.
    mutating func content(closing name: String) throws(PropertyListDecodingError) -> [UInt8] {
        var text: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "&") {
                text += try reference()
            } else if byte != UInt8(ascii: "<") {
                text.append(byte)
                index += 1
            } else if starts(with: Array("<![CDATA[".utf8)) {
                let start = index + 9
                index = start
                let end = try skip(past: Array("]]>".utf8), what: "CDATA section")
                text += bytes[start..<end - 3]
            } else if starts(with: Array("<!--".utf8)) || starts(with: Array("<?".utf8)) {
                try skipMarkup()
            } else {
                try closeTag(name)
                return text
            }
        }
        throw fail("<\(name)> is not closed")
    }

    /// `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&#N;` or `&#xH;`, as UTF-8.
    mutating func reference() throws(PropertyListDecodingError) -> [UInt8] {
        let start = index + 1
        guard let semicolon = bytes[start..<min(bytes.count, start + 12)].firstIndex(of: UInt8(ascii: ";")) else {
            throw fail("a bare '&'")
        }
        let name = String(decoding: bytes[start..<semicolon], as: UTF8.self)
        index = semicolon + 1
        switch name {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            var number = Substring(name)
            guard number.hasPrefix("#") else { throw fail("unknown entity &\(name);") }
            number = number.dropFirst()
            let hex = number.hasPrefix("x")
            if hex { number = number.dropFirst() }
            guard !number.isEmpty, number.allSatisfy({ $0.isHexDigit && (hex || $0.isNumber) }),
                  let value = UInt32(number, radix: hex ? 16 : 10), let scalar = Unicode.Scalar(value) else {
                throw fail("bad character reference &\(name);")
            }
            return Array(String(Character(scalar)).utf8)
        }
    }

    // MARK: Markup

    /// `<name attributes…>` or `<name …/>`.
    mutating func openTag() throws(PropertyListDecodingError) -> Tag {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { throw fail("text where an element belongs") }
        index += 1
        let name = self.name()
        guard !name.isEmpty else { throw fail("a malformed tag") }
        var exact: String?
        while true {
            skipSpace()
            guard index < bytes.count else { throw fail("a tag that is not closed") }
            switch bytes[index] {
            case UInt8(ascii: ">"):
                index += 1
                return Tag(name: name, isEmpty: false, exact: exact)
            case UInt8(ascii: "/"):
                guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: ">") else { throw fail("a malformed tag") }
                index += 2
                return Tag(name: name, isEmpty: true, exact: exact)
            default:
                let (attribute, value) = try attribute()
                if attribute == ExactSpelling.attribute { exact = String(decoding: bytes[value], as: UTF8.self) }
            }
        }
    }

    /// `name = "value"` (or single quotes): the name, and where the value is, as it is written.
    mutating func attribute() throws(PropertyListDecodingError) -> (name: String, value: Range<Int>) {
        let name = self.name()
        guard !name.isEmpty else { throw fail("a malformed attribute") }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw fail("an attribute without a value") }
        index += 1
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
            throw fail("an attribute value without quotes")
        }
        let quote = bytes[index]
        index += 1
        let start = index
        let end = try skip(past: [quote], what: "attribute value")
        return (name, start..<end - 1)
    }

    /// `</name>`.
    mutating func closeTag(_ expected: String) throws(PropertyListDecodingError) {
        guard starts(with: Array("</".utf8)) else { throw fail("</\(expected)> expected") }
        index += 2
        let name = self.name()
        skipSpace()
        guard name == expected, index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw fail("</\(expected)> expected") }
        index += 1
    }

    mutating func name() -> String {
        let start = index
        while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"), 0x80...0xFF: true
        default: false
        }
    }

    /// Skips white space, comments, processing instructions (the XML
    /// declaration among them) and a DOCTYPE.
    mutating func skipMarkup() throws(PropertyListDecodingError) {
        while true {
            skipSpace()
            if starts(with: Array("<!--".utf8)) {
                index += 4
                _ = try skip(past: Array("-->".utf8), what: "comment")
            } else if starts(with: Array("<?".utf8)) {
                index += 2
                _ = try skip(past: Array("?>".utf8), what: "processing instruction")
            } else if starts(with: Array("<!DOCTYPE".utf8)) {
                try skipDoctype()
            } else {
                return
            }
        }
    }

    /// `<!DOCTYPE … [internal subset] >`, quotes, brackets and comments respected.
    mutating func skipDoctype() throws(PropertyListDecodingError) {
        index += 9
        var quote: UInt8?
        var brackets = 0
        while index < bytes.count {
            if quote == nil, starts(with: Array("<!--".utf8)) {
                index += 4
                _ = try skip(past: Array("-->".utf8), what: "comment")
                continue
            }
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                brackets += 1
            } else if byte == UInt8(ascii: "]") {
                brackets -= 1
            } else if byte == UInt8(ascii: ">"), brackets <= 0 {
                return
            }
        }
        throw fail("a DOCTYPE that is not closed")
    }

    mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    /// Moves past the next `terminator` and returns where that is.
    mutating func skip(past terminator: [UInt8], what: String) throws(PropertyListDecodingError) -> Int {
        while index + terminator.count <= bytes.count {
            if starts(with: terminator) {
                index += terminator.count
                return index
            }
            index += 1
        }
        index = bytes.count
        throw fail("a \(what) that is not closed")
    }

    func starts(with prefix: [UInt8]) -> Bool {
        index + prefix.count <= bytes.count && bytes[index..<index + prefix.count].elementsEqual(prefix)
    }
}
