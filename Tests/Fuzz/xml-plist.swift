// Fuzz target: XML property-list decoding (issue 7). Any bytes decode or are
// refused within the limits; what decodes is written in one form, which
// reads back to itself (dates are rounded down to the second and NaNs lose
// their payloads on the way, so the comparison is of documents).

#if canImport(KVStore)
@testable import KVStore
#endif

func fuzzXMLPropertyList(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    guard let value = try? XMLPropertyListReader.value(bytes, limits: .standard) else { return }
    let document = XMLPropertyListWriter.document(value)
    let again = document.withUnsafeBytes { try? XMLPropertyListReader.value($0, limits: .standard) }
    try require(again != nil, "the XML form of a decoded value does not decode")
    try require(again.map { XMLPropertyListWriter.document($0) } == document, "the XML form is not stable")
}
