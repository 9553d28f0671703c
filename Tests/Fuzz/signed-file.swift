// Fuzz target: the form of a sealed store's signed files, SignedFile.decode (issue 38): writer.json,
// device.json, progress.json, waiting.json, adopted.json and retention.json as a sealed store writes
// them. Any bytes decode or are refused; a decoded file is exactly its bytes again, its fixed fields of
// their sizes. (What opens and checks it is swift-crypto's, as the roster's signatures are.)

#if canImport(KVStore)
@testable import KVStore
#endif

func fuzzSignedFile(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    let input = Array(bytes)
    guard let file = SignedFile.decode(input) else {
        try require(input.count < SignedFile.overhead || !input.starts(with: SignedFile.mark) || input[8] != SignedFile.format
                    || input[9..<13].allSatisfy { $0 == 0 }, "a signed file of the right form and size was refused")
        return
    }
    try require(file.bytes == input, "a decoded signed file is other bytes again")
    try require(file.nonce.count == SignedFile.nonceSize && file.signature.count == SignedFile.signatureSize
                && file.sealed.count == input.count - SignedFile.overhead + SignedFile.tagSize, "a field of a signed file has the wrong size")
    try require(SignedFile.unsigned(epoch: file.epoch, sequence: file.sequence, nonce: file.nonce, sealed: file.sealed) == file.signedBytes,
                "a signed file's fields encode to other bytes")
}
