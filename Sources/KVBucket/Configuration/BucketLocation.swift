/// A bucket and the prefix under which kvfs keeps its objects, as `s3://BUCKET[/PREFIX]` names them.
public struct BucketLocation: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The bucket's name.
    public let bucket: String
    /// The prefix, without leading or trailing slashes (empty for the bucket's root).
    public let prefix: String

    /// The location `s3://BUCKET[/PREFIX]` names; a bucket name must be 3 to 63 lower-case letters, digits, `.` and `-`.
    public init(parsing text: String) throws(BucketError) {
        guard text.hasPrefix("s3://") else { throw .usage("'\(text)' is not an s3:// URL (give s3://BUCKET or s3://BUCKET/PREFIX)") }
        let rest = text.dropFirst("s3://".count)
        let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let bucket = String(parts[0])
        guard (3...63).contains(bucket.count),
              bucket.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }) else {
            throw .usage("'\(bucket)' is not a bucket name (3 to 63 lower-case letters, digits, '.' and '-')")
        }
        let prefix = parts.count > 1 ? parts[1].split(separator: "/").joined(separator: "/") : ""
        guard !prefix.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) else {
            throw .usage("the prefix '\(prefix)' holds '.' or '..'")
        }
        self.bucket = bucket
        self.prefix = prefix
    }

    /// `s3://BUCKET[/PREFIX]`.
    public var description: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    /// The key of `name` under the prefix.
    public func key(_ name: String) -> String { prefix.isEmpty ? name : "\(prefix)/\(name)" }
}
