/// An element of an S3 answer's XML: its name, its text, its child elements.
///
/// Read by a small parser of its own rather than FoundationXML, which would
/// link libxml2 into `kvfs`: S3's answers are plain elements and text (a
/// declaration, no DTD, no CDATA), and anything else makes the parse fail,
/// which a caller takes as a malformed answer. Attributes and namespaces are
/// ignored.
final class XMLNode {
    let name: String
    var text = ""
    var children: [XMLNode] = []

    init(name: String) { self.name = name }

    /// The document's root element, or nil when `bytes` is not XML of that kind.
    static func parse(_ bytes: [UInt8]) -> XMLNode? {
        var parser = Parser(text: String(decoding: bytes, as: UTF8.self))
        return parser.document()
    }

    /// The first element named `name` among this one's descendants, depth first.
    func first(_ name: String) -> XMLNode? {
        for child in children {
            if child.name == name { return child }
            if let found = child.first(name) { return found }
        }
        return nil
    }

    /// The children named `name`.
    func all(_ name: String) -> [XMLNode] { children.filter { $0.name == name } }

    /// The text of the child named `name`, if there is one.
    func child(_ name: String) -> String? { children.first { $0.name == name }?.text }

    private struct Parser {
        let text: String
        var index: String.Index

        init(text: String) {
            self.text = text
            index = text.startIndex
        }

        mutating func document() -> XMLNode? {
            var root: XMLNode?
            var open: [XMLNode] = []
            while index < text.endIndex {
                guard let tagStart = text[index...].firstIndex(of: "<") else {
                    guard open.isEmpty, text[index...].allSatisfy(\.isWhitespace) else { return nil }
                    break
                }
                if let node = open.last {
                    guard let decoded = Self.decoded(text[index..<tagStart]) else { return nil }
                    node.text += decoded
                } else if !text[index..<tagStart].allSatisfy(\.isWhitespace) {
                    return nil
                }
                guard let tagEnd = text[tagStart...].firstIndex(of: ">") else { return nil }
                let tag = text[text.index(after: tagStart)..<tagEnd]
                index = text.index(after: tagEnd)
                if tag.hasPrefix("?") || tag.hasPrefix("!--") { continue }
                if tag.hasPrefix("/") {
                    guard let node = open.popLast(), node.name == tag.dropFirst().trimmingWhitespace() else { return nil }
                    continue
                }
                guard !tag.hasPrefix("!") else { return nil }  // DTDs, CDATA: not S3's
                let selfClosing = tag.hasSuffix("/")
                let name = String((selfClosing ? tag.dropLast() : tag).prefix { !$0.isWhitespace })
                guard !name.isEmpty, root == nil || !open.isEmpty else { return nil }
                let node = XMLNode(name: name)
                open.last?.children.append(node)
                if root == nil { root = node }
                if !selfClosing { open.append(node) }
            }
            return open.isEmpty ? root : nil
        }

        /// Text with its entities (`&amp;` and the four others, `&#N;`, `&#xN;`) replaced, or nil when one is unknown.
        static func decoded(_ text: Substring) -> String? {
            guard text.contains("&") else { return String(text) }
            var result = ""
            var rest = text[...]
            while let ampersand = rest.firstIndex(of: "&") {
                result += rest[..<ampersand]
                guard let semicolon = rest[ampersand...].firstIndex(of: ";") else { return nil }
                let entity = rest[rest.index(after: ampersand)..<semicolon]
                switch entity {
                case "amp": result += "&"
                case "lt": result += "<"
                case "gt": result += ">"
                case "quot": result += "\""
                case "apos": result += "'"
                default:
                    let number = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16)
                        : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                    guard let number, let scalar = Unicode.Scalar(number) else { return nil }
                    result.unicodeScalars.append(scalar)
                }
                rest = rest[rest.index(after: semicolon)...]
            }
            return result + rest
        }
    }
}

private extension Substring {
    func trimmingWhitespace() -> Substring {
        drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed().reduce(into: Substring()) { $0.append($1) }
    }
}
