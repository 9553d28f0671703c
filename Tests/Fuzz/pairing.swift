// Fuzz target: the pairing messages' decoders, PairingRequest.parse and
// PairingAccept.parse (issue 26): what a writer of the sync directory puts in
// pairing/ is read before its MAC is checked. Any bytes decode or are refused;
// a decoded message is exactly its bytes again (the MAC being the last 32).

#if canImport(KVStore)
@testable import KVStore
#endif

func fuzzPairing(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    let input = Array(bytes)
    if let request = PairingRequest.parse(input) {
        try require(request.unsigned + input.suffix(32) == input, "a decoded pairing request encodes to other bytes")
    }
    if let accept = PairingAccept.parse(input) {
        try require(accept.unsigned + input.suffix(32) == input, "a decoded pairing accept encodes to other bytes")
    }
    try require(input.count <= PairingWire.limit || (PairingRequest.parse(input) == nil && PairingAccept.parse(input) == nil),
                "a pairing message past its limit decoded")
}
