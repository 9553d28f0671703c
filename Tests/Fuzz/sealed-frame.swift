// Fuzz target: the sealed-frame opener, RecordFrame.scan with a SealedFileOpener
// (issue 26 item 6). Any bytes scan in linear time; offsets stay in bounds;
// the records a sealed scan hands out, sealed again, scan back as themselves;
// and whenever the last signature holds, checking each hands out a prefix of
// the same records (a signature before the last is not covered by the chain:
// one altered there is refused only by the check of each).

import Crypto
#if canImport(KVStore)
@testable import KVStore
#endif

/// The fixed keys the corpus was sealed with (`sealedFuzzSeeds` makes it):
/// one member, writing segment 1 of store "fuzz".
enum SealedFuzzKeys {
    static let device = DeviceID(bytes: [UInt8](repeating: 0xA5, count: 16))
    static let keys: SealingKeys = {
        let signing = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 7, count: 32))
        return SealingKeys(storeID: "fuzz", currentEpoch: 1, storeKeys: [1: SymmetricKey(data: [UInt8](repeating: 9, count: 32))],
                           device: device, signingKey: signing, members: [device: signing.publicKey])
    }()
    static var origin: RecordChain { RecordChain(storeID: "fuzz", device: device, file: SealedFile(kind: .segment, generation: 1)) }

    static func scan(_ bytes: UnsafeRawBufferPointer, verifiesEach: Bool) -> RecordFrame.Scan {
        RecordFrame.scan(bytes, opener: SealedFileOpener(keys: keys, device: device, chain: origin, verifiesEach: verifiesEach))
    }
}

func fuzzSealedFrames(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    let last = SealedFuzzKeys.scan(bytes, verifiesEach: false)
    let each = SealedFuzzKeys.scan(bytes, verifiesEach: true)
    for scan in [last, each] {
        try require(scan.settledOffset == scan.resumeOffset && scan.resumeOffset <= bytes.count, "offsets out of order")
        try require(scan.records.count == scan.frames.count && scan.frames.allSatisfy { $0.upperBound <= scan.resumeOffset }, "frames past the end")
        try require(scan.refused.map { $0.offset >= scan.resumeOffset && $0.offset < bytes.count } ?? true, "a refusal before the records read")
    }
    if !last.signatureFailed {
        try require(Array(last.records.prefix(each.records.count)).map(RecordCodec.encode) == each.records.map(RecordCodec.encode),
                    "checking each signature reads other records")
    }
    var sealer = RecordSealer(keys: SealedFuzzKeys.keys, chain: SealedFuzzKeys.origin)
    let framed = each.records.flatMap { sealer.frame($0, signed: true) }
    let again = framed.withUnsafeBytes { SealedFuzzKeys.scan($0, verifiesEach: true) }
    try require(again.records.map(RecordCodec.encode) == each.records.map(RecordCodec.encode) && again.refused == nil
                && !again.stoppedEarly, "records do not seal back")
}
