// Fuzz target: the sealed store's roster decoder, RosterVersion.decode (issue 26),
// and with it the key wraps it carries (fixed-size fields of each member).
// Any file of roster/ decodes or is refused within the limits; a decoded version
// is exactly its bytes again, and within the limits.

#if canImport(KVStore)
@testable import KVStore
#endif

func fuzzRoster(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    let input = Array(bytes)
    guard let version = RosterVersion.decode(input) else { return }
    try require(version.reencoded == input, "a decoded roster version encodes to other bytes")
    try require(version.members.count <= RosterVersion.Limits.members && input.count <= RosterVersion.Limits.bytes,
                "a roster version past the limits decoded")
    try require(version.members.allSatisfy { $0.wrappedKey.count == RosterVersion.Limits.wrapBytes && $0.signingKey.count == 32 },
                "a member's key or key wrap has the wrong size")
}
