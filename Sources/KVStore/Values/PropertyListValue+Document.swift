import Foundation

/// Property-list documents (XML and binary) ↔ values, with kvfs's own codecs.
///
/// Why not Foundation's `PropertyListSerialization`: on hostile input it cannot
/// be made safe from outside. A 46-byte binary plist whose top object is a set
/// kills the process inside Foundation's bridging of the result to Swift (a
/// crash no `catch` sees), and a 163-byte one whose arrays share one another
/// took 31 s and 630 MB to decode, because the bridge copies every shared
/// reference. Validating first would mean parsing the whole format to find
/// those (sets at any depth, the unfolded size), which is the decoder itself.
/// Its writer also loses what the store keeps exactly: the sign of -0.0 in XML
/// and NaN payloads in the binary form, and it writes control characters raw
/// into XML. These codecs bound depth, values and bytes as they go
/// (``DecodingLimits``), never touch a byte twice for a shared object, and
/// write one deterministic form.
extension PropertyListValue {
    /// The value as a property-list document: XML (the file form of arrays and
    /// dictionaries; `.openStep`, which cannot hold every type, also gives XML)
    /// or binary. The binary form keeps every bit; the XML form is what Apple's
    /// and Python's parsers read, so it keeps dates to the second and every NaN
    /// as the usual one (see `XMLPropertyListWriter`).
    public func propertyListData(format: PropertyListSerialization.PropertyListFormat = .xml) -> Data {
        switch format {
        case .binary: Data(BinaryPropertyListWriter.document(self))
        default: Data(XMLPropertyListWriter.document(self))
        }
    }

    /// The value as an XML property list that keeps every bit: the document
    /// ``propertyListData(format:)`` writes, in which a real or date whose
    /// text loses bits (a date's fraction of a second, a NaN's sign and
    /// payload) also carries them in an `exact` attribute, which kvfs reads
    /// back and Apple's and Python's parsers ignore. What `kvfs export` writes.
    public var exactXMLPropertyListData: Data { Data(XMLPropertyListWriter.document(self, exact: true)) }

    /// Decodes a property-list document (XML or binary, told apart by its
    /// first bytes) of any top-level type, within `limits`.
    public init(propertyListData data: Data, limits: DecodingLimits = .standard) throws(PropertyListDecodingError) {
        let bytes = [UInt8](data)
        let decoded = bytes.withUnsafeBytes { buffer in
            Result { () throws(PropertyListDecodingError) -> PropertyListValue in
                if BinaryPropertyListReader.hasMagic(buffer) {
                    return try BinaryPropertyListReader.value(buffer, limits: limits)
                }
                return try XMLPropertyListReader.value(buffer, limits: limits)
            }
        }
        self = try decoded.get()
    }
}
