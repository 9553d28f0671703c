// Fuzz target: binary property-list decoding (issue 7.1, 7.2). Any bytes
// decode or are refused within the limits; what decodes writes back as a
// document that decodes to the same bits.

func fuzzBinaryPropertyList(_ bytes: UnsafeRawBufferPointer) {
    guard let value = try? BinaryPropertyListReader.value(bytes, limits: .standard) else { return }
    let document = BinaryPropertyListWriter.document(value)
    let again = document.withUnsafeBytes { try? BinaryPropertyListReader.value($0, limits: .standard) }
    require(again.map(exactBits) == exactBits(value), "binary round trip changed the value")
}
