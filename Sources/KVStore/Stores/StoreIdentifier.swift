/// The name of a store, as Apple's key-value store identifier names an app's
/// store (`com.example.notes`): each store is the folder of that name in the
/// sync root (``StoreRoot``), with its own keys, quota, devices and changes.
///
/// The rule: 1 to 155 characters (Apple's limit for a bundle identifier) of
/// ASCII letters, digits, `-`, `_` and `.`, reverse-DNS style: parts
/// separated by single dots, none empty, the first character a letter or a
/// digit. So every identifier is a plain folder name on every filesystem
/// (no `/`, no `.` or `..`, no hidden folder), reads the same in a shell, a
/// URL and a systemd unit name, and nothing a synchronizer leaves in the
/// root (`.stfolder`, `.stversions`, `.unison.*`, conflict copies with spaces)
/// passes for a store. `default` is the store kvfs has always used.
public struct StoreIdentifier: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The identifier's text.
    public let rawValue: String

    /// The longest identifier, in characters.
    public static let maximumLength = 155

    /// The store the command line and the filesystem use when none is named.
    public static let `default` = StoreIdentifier(checked: "default")

    /// `text`, when it is an identifier.
    ///
    /// - Throws: ``InvalidStoreIdentifier`` saying which part of the rule it breaks.
    public init(_ text: String) throws(InvalidStoreIdentifier) {
        if let reason = Self.violation(in: text) { throw InvalidStoreIdentifier(text: text, reason: reason) }
        rawValue = text
    }

    private init(checked text: String) { rawValue = text }

 /// The identifier as written (`com.example.notes`).
    public var description: String { rawValue }

 /// Ordered by UTF-8 bytes, as `kvfs stores` lists them.
    public static func < (lhs: StoreIdentifier, rhs: StoreIdentifier) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    /// The identifier nearest to a name that may break the rule (an
    /// executable's name): each character the rule refuses becomes `-`,
    /// empty parts and whatever precedes the first letter or digit go, and it
    /// is cut to the longest length. Nil when nothing usable is left.
    public init?(sanitizing name: String) {
        let allowed = String(name.unicodeScalars.map { Self.isAllowed($0) ? Character($0) : "-" })
        var text = allowed.split(separator: ".").joined(separator: ".")
        text = String(text.drop { !Self.isLetterOrDigit($0) }.prefix(Self.maximumLength))
        while text.hasSuffix(".") { text.removeLast() }
        guard (try? StoreIdentifier(text)) != nil else { return nil }
        rawValue = text
    }

    /// What `text` breaks of the rule, or nil.
    private static func violation(in text: String) -> String? {
        guard let first = text.unicodeScalars.first else { return "it is empty" }
        if let refused = text.unicodeScalars.first(where: { !isAllowed($0) }) {
            return "\(refused.isASCII && !refused.isControlCharacter ? "'\(refused)'" : "U+\(String(refused.value, radix: 16, uppercase: true))") is not allowed"
        }
        let count = text.unicodeScalars.count
        if count > maximumLength { return "it has \(count) characters, more than \(maximumLength)" }
        if !isLetterOrDigit(Character(first)) { return "it must start with a letter or a digit" }
        if text.hasSuffix(".") { return "it ends with a dot" }
        if text.contains("..") { return "it has two dots in a row" }
        return nil
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (isLetterOrDigit(Character(scalar)) || scalar == "-" || scalar == "_" || scalar == ".")
    }

    private static func isLetterOrDigit(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber)
    }
}

/// Why a text is not a ``StoreIdentifier``, in one line.
public struct InvalidStoreIdentifier: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text refused.
    public let text: String
    /// Which part of the rule it breaks.
    public let reason: String

 /// One line: the text, the rule it breaks, and what an identifier may hold.
    public var description: String {
        "'\(text.controlCharactersSpelledOut)' is not a store identifier: \(reason) "
            + "(use 1 to \(StoreIdentifier.maximumLength) letters, digits, '-', '_' and '.', as in com.example.notes)"
    }
}
