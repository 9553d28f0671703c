#if canImport(Glibc)
import Glibc
#endif

/// A key: a string that is its exact sequence of Unicode scalars.
///
/// Swift's `String` compares and hashes by canonical equivalence, so `café`
/// written with `é` (U+00E9) and with `e` + U+0301 are one `String` to a
/// `Dictionary` or a `Set`, and one of them would lose its value. Apple's store
/// keeps them as two keys (NSDictionary compares its NSString keys literally),
/// and so does kvfs: every dictionary and set of keys, in the store, the
/// merge, the journal, the filesystem's name tables and the library, is keyed
/// by this type, whose equality and hash are those of the UTF-8 bytes (the
/// same as comparing scalars, for the valid Unicode every `String` holds).
/// The keys of a property-list dictionary (``PropertyListValue/dictionary(_:)``)
/// are held the same way, and so are file names at the mount point, which are
/// keys in their file form.
///
/// Its order is that of the UTF-8 bytes: the same on every device, whatever
/// the locale, for listings, snapshots and the quota rule's ties.
public struct StoreKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, CustomDebugStringConvertible,
    ExpressibleByStringInterpolation {
    /// The key's text, with its scalars exactly as written.
    public let string: String

    /// The key spelled by `string`, scalar for scalar.
    public init(_ string: String) {
        self.string = string
    }

    /// A key written as a literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// A key written as a literal with interpolations (`"item-\(index)"`).
    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(String(stringInterpolation: stringInterpolation))
    }

    /// Reads a key written as a JSON string (the change log's lines).
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Writes the key as a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }

 /// The key as written.
    public var description: String { string }

 /// The key as a quoted Swift string literal, escapes spelled out.
    public var debugDescription: String { string.debugDescription }

 /// Equal when the UTF-8 bytes are: no normalization, unlike `String`'s `==`.
    /// (Compared as two buffers: `utf8.elementsEqual` stepped byte by byte through
    /// the views, and every dictionary lookup of a key pays for this.)
    public static func == (lhs: StoreKey, rhs: StoreKey) -> Bool {
        var (left, right) = (lhs.string, rhs.string)
        return left.withUTF8 { left in
            right.withUTF8 { right in
                left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }

 /// Hashes the UTF-8 bytes, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        var bytes = string
        bytes.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(string.utf8.count)  // the end of the key, as String's own hash marks it
    }

 /// Ordered by UTF-8 bytes (`LC_ALL=C sort`), the same on every device.
    public static func < (lhs: StoreKey, rhs: StoreKey) -> Bool {
        lhs.string.utf8.lexicographicallyPrecedes(rhs.string.utf8)
    }
}
