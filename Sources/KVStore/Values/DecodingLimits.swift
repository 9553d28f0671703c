/// What decoding one value may cost, whatever the bytes claim: every decoder
/// of untrusted bytes (binary and XML property lists, journal records) counts
/// against these while it builds the value, and refuses the input the moment a
/// count passes its bound, so time and memory stay a small multiple of the quota.
///
/// Why these numbers: a value must fit the 1 MiB quota in its file form, where
/// an array or dictionary is an XML document in which every element (a key
/// included) takes at least 8 bytes (`<true/>` and a newline) and every
/// string or data byte at least one. So no value that could be stored has
/// more than 2¹⁷ elements or 1 MiB of content: the bounds are that many
/// elements, and twice that content (a shared string may count twice before
/// the quota refuses it). Counts are of the value as it unfolds: a binary
/// property list that refers to one object from many places costs each
/// reference the object's whole size (Apple's own parser shares such
/// objects, which is how 170 bytes became 3.3 GB once bridged to Swift), and
/// every walk of a value (encoding its file form, comparing it) pays for the
/// unfolded size. Depth is bounded because every walk of a value (equality,
/// hashing, encoding, even freeing it) recurses once per level.
public struct DecodingLimits: Sendable, Equatable {
    /// Arrays and dictionaries nested inside one another, the outermost counting as 1.
    public var maxDepth: Int
    /// Values in all (the containers, their elements and each dictionary key).
    public var maxNodes: Int
    /// Bytes of strings (UTF-8), keys and data in all.
    public var maxContentBytes: Int

    /// A set of limits.
    public init(maxDepth: Int, maxNodes: Int, maxContentBytes: Int) {
        self.maxDepth = maxDepth
        self.maxNodes = maxNodes
        self.maxContentBytes = maxContentBytes
    }

    /// The limits every decoder uses unless told otherwise.
    public static let standard = DecodingLimits(maxDepth: 256, maxNodes: 1 << 17, maxContentBytes: 2 << 20)
}

/// The running cost of one decode, checked against its limits at every step.
struct DecodingBudget {
    let limits: DecodingLimits
    private(set) var nodes = 0
    private(set) var contentBytes = 0

    init(_ limits: DecodingLimits) { self.limits = limits }

    /// Counts `nodes` more values holding `bytes` more content bytes.
    mutating func spend(nodes: Int = 1, bytes: Int = 0) throws(PropertyListDecodingError) {
        self.nodes += nodes
        contentBytes += bytes
        if self.nodes > limits.maxNodes {
            throw PropertyListDecodingError(reason: "more than \(limits.maxNodes) values, more than any value within the quota holds")
        }
        if contentBytes > limits.maxContentBytes {
            throw PropertyListDecodingError(reason: "more than \(limits.maxContentBytes) bytes of strings and data, more than any value within the quota holds")
        }
    }

    /// Checks that a container at `depth` (1 for the outermost) may be opened.
    func enter(depth: Int) throws(PropertyListDecodingError) {
        if depth > limits.maxDepth {
            throw PropertyListDecodingError(reason: "arrays and dictionaries nested deeper than \(limits.maxDepth) levels")
        }
    }
}

/// Why a property-list document (or a journal record's value) was refused.
public struct PropertyListDecodingError: Error, Equatable, Sendable {
    /// What was wrong, for the user.
    public var reason: String

    /// An error saying `reason`.
    public init(reason: String) { self.reason = reason }
}
