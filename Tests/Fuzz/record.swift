// Fuzz target: the journal record decoder, RecordCodec.decode (issue 7).
// Any payload decodes or is refused within the limits; a decoded record
// encodes (as version 2) to a payload that decodes to the same bits.

func fuzzRecord(_ bytes: UnsafeRawBufferPointer) {
    guard let record = RecordCodec.decode(bytes) else { return }
    let payload = RecordCodec.encode(record)
    guard let again = payload.withUnsafeBytes({ RecordCodec.decode($0) }) else { fatalError("a re-encoded record does not decode") }
    require(RecordCodec.encode(again) == payload, "a record changed on its way through version 2")
}
