// Fuzz target: binary property-list decoding (issue 7.1, 7.2). Any bytes
// decode or are refused within the limits; what decodes writes back as a
// document that decodes to the same bits. The round trip is checked for
// values of up to 4,096 values unfolded: larger ones (shared references
// unfold up to the 2^17 limit) would spend the fuzzer's time writing them out.

#if canImport(KVStore)
@testable import KVStore
#endif

/// Limits under which a decoded value is small enough to write back on every input.
private let roundTripLimits = DecodingLimits(maxDepth: 256, maxNodes: 4096, maxContentBytes: 1 << 16)

func fuzzBinaryPropertyList(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    guard (try? BinaryPropertyListReader.value(bytes, limits: .standard)) != nil,
          let value = try? BinaryPropertyListReader.value(bytes, limits: roundTripLimits) else { return }
    let document = BinaryPropertyListWriter.document(value)
    let again = document.withUnsafeBytes { try? BinaryPropertyListReader.value($0, limits: roundTripLimits) }
    try require(again.map(exactBits) == exactBits(value), "binary round trip changed the value")
}
