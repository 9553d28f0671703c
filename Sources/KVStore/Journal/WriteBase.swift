/// What a write's writer had as the current version of the key it wrote: the
/// fact that tells a concurrent overwrite from a sequential one (docs/sync.md
/// § Conflicts).
///
/// Stamps alone cannot tell: a write stamped after another may come from a
/// device that never read it (its clock was merely ahead). Nor can read
/// progress: it is published now and then, not with every record. So each
/// write record of format 3 carries, per key it changes, the stamp of the
/// version its writer showed as that key's winner when it wrote.
public enum WriteBase: Hashable, Sendable {
    /// Not recorded: a record of format 1 or 2. Such a write is never called a conflict.
    case unknown
    /// The writer had no version of the key at all.
    case nothing
    /// The stamp of the version the writer had as the key's current one.
    case version(Stamp)

    /// Whether the write replaced the version stamped `stamp` without its
    /// writer having seen it: its base is older (or there was none). False
    /// for a sequential write (its base is that version or a later one) and
    /// for an unknown base.
    public func isConcurrent(with stamp: Stamp) -> Bool {
        switch self {
        case .unknown: false
        case .nothing: true
        case let .version(base): base < stamp
        }
    }
}
