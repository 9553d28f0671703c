/// The bijection between keys and file names at the mount point.
///
/// Ordinary keys are their own file names. What cannot stand in a file name is
/// escaped with `%`: `/` as `%2F`, NUL as `%00`; a `%` that would otherwise be
/// read as one of the four escapes as `%25`; and the leading dot of the keys
/// `.`, `..` and `.kvfs` (which would collide with the directory entries and
/// the control folder) as `%2E`. Decoding knows only these exact upper-case
/// codes; any other `%` is literal.
public enum FileName {
    /// The control folder's name; no key has it as its file name.
    public static let controlFolder = ".kvfs"

    private static let escapes: [(code: String, character: Character)] = [
        ("2F", "/"), ("00", "\u{0}"), ("25", "%"), ("2E", "."),
    ]

    /// The file name that shows `key`. `key` must not be empty.
    public static func encode(_ key: StoreKey) -> String {
        let key = key.string
        let plain = !key.utf8.contains { $0 == 0x2F || $0 == 0 || $0 == 0x25 }
        if plain && key != "." && key != ".." && key != controlFolder { return key }
        var name = ""
        name.reserveCapacity(key.utf8.count)
        let scalars = Array(key.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "/": name += "%2F"
            case "\u{0}": name += "%00"
            case "%" where startsEscape(scalars, at: index + 1): name += "%25"
            case "." where index == 0 && (key == "." || key == ".." || key == controlFolder): name += "%2E"
            default: name.unicodeScalars.append(scalar)
            }
        }
        return name
    }

    /// The key a file name shows, or nil when the name is not the encoding of
    /// any key (empty, the control folder, or a spelling `encode` never makes).
    public static func decode(_ name: String) -> StoreKey? {
        guard !name.isEmpty, name != controlFolder, name != ".", name != ".." else { return nil }
        if !name.utf8.contains(0x25) { return name.utf8.contains(0x2F) ? nil : StoreKey(name) }
        var key = ""
        key.reserveCapacity(name.utf8.count)
        let scalars = Array(name.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if scalars[index] == "%", let character = escape(scalars, at: index + 1) {
                key.append(character)
                index += 3
            } else {
                key.unicodeScalars.append(scalars[index])
                index += 1
            }
        }
        // A bijection: only the canonical spelling names the key (compared
        // byte for byte: `String`'s == would take another normalization for it).
        return encode(StoreKey(key)).utf8.elementsEqual(name.utf8) ? StoreKey(key) : nil
    }

    private static func escape(_ scalars: [Unicode.Scalar], at index: Int) -> Character? {
        guard index + 1 < scalars.count else { return nil }
        let code = String(String.UnicodeScalarView([scalars[index], scalars[index + 1]]))
        return escapes.first { $0.code == code }?.character
    }

    private static func startsEscape(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        escape(scalars, at: index) != nil
    }
}
