import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An element of an S3 answer's XML: its name, its text, its child elements.
/// Namespaces are ignored (S3's answers put every element in one).
final class XMLNode {
    let name: String
    var text = ""
    var children: [XMLNode] = []

    init(name: String) { self.name = name }

    /// The document's root element, or nil when `bytes` is not XML.
    static func parse(_ bytes: [UInt8]) -> XMLNode? {
        guard !bytes.isEmpty else { return nil }
        let builder = Builder()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = builder
        guard parser.parse() else { return nil }
        return builder.root
    }

    /// The first element named `name` among this one's children, searched depth first.
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

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLNode?
        var open: [XMLNode] = []

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName: String?, attributes: [String: String] = [:]) {
            let node = XMLNode(name: elementName)
            open.last?.children.append(node)
            if root == nil { root = node }
            open.append(node)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            open.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            open.last?.text += string
        }
    }
}
