/// Why a membership step (pairing, joining, revoking, loading the keys of a
/// sealed store) failed: one line that says what to do.
public struct MembershipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line.
    public let description: String

    init(_ description: String) { self.description = description }

    /// The error of a file that could not be read or written (a `KVStoreError`, which says which and why).
    init(_ error: any Error) { self.init(String(describing: error)) }
}
