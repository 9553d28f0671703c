// Fuzz target: XML property-list decoding (issue 7). Any bytes decode or are
// refused within the limits; what decodes is written in one form, which
// reads back to itself (dates are rounded down to the second and NaNs lose
// their payloads on the way, so the comparison is of documents).

func fuzzXMLPropertyList(_ bytes: UnsafeRawBufferPointer) {
    guard let value = try? XMLPropertyListReader.value(bytes, limits: .standard) else { return }
    let document = XMLPropertyListWriter.document(value)
    guard let again = document.withUnsafeBytes({ try? XMLPropertyListReader.value($0, limits: .standard) }) else {
        fatalError("the XML form of a decoded value does not decode")
    }
    require(XMLPropertyListWriter.document(again) == document, "the XML form is not stable")
}
