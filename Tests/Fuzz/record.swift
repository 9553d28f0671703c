// Fuzz target: the journal record decoder, RecordCodec.decode (issue 7).
// Any payload decodes or is refused within the limits; a decoded record
// encodes (in the version written now) to a payload that decodes to the same bits.

#if canImport(KVStore)
@testable import KVStore
#endif

func fuzzRecord(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    guard let record = RecordCodec.decode(bytes) else { return }
    let payload = RecordCodec.encode(record)
    let again = payload.withUnsafeBytes { RecordCodec.decode($0) }
    try require(again != nil, "a re-encoded record does not decode")
    try require(again.map(RecordCodec.encode) == payload, "a record changed on its way through the version written now")
}
