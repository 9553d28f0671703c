// Fuzz target: the sealed-frame opener, RecordFrame.scan with a SealedFileOpener
// (issue 26 item 6), as another device reads a folder and as its own device
// does (which takes its own unsigned records, by their nonce). Any bytes scan
// in linear time; offsets stay in bounds; the records a sealed scan hands
// out, sealed again (unsigned, then a mark), scan back as themselves;
// whenever the last signature (and own nonce) holds, checking each hands out
// a prefix of the same records (a signature before the last is not covered
// by the chain: one altered there is refused only by the check of each); and
// the device's own reading hands out at least what another device's does.

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

    /// `bytes` read as the device's segment 1, by another device or (`own`) by the device itself.
    static func scan(_ bytes: UnsafeRawBufferPointer, verifiesEach: Bool, own: Bool = false) -> RecordFrame.Scan {
        RecordFrame.scan(bytes, opener: SealedFileOpener(keys: keys, device: device, chain: origin, verifiesEach: verifiesEach, ownFolder: own))
    }
}

func fuzzSealedFrames(_ bytes: UnsafeRawBufferPointer) throws(OracleFailure) {
    let last = SealedFuzzKeys.scan(bytes, verifiesEach: false)
    let each = SealedFuzzKeys.scan(bytes, verifiesEach: true)
    let ownLast = SealedFuzzKeys.scan(bytes, verifiesEach: false, own: true)
    let ownEach = SealedFuzzKeys.scan(bytes, verifiesEach: true, own: true)
    for scan in [last, each, ownLast, ownEach] {
        try require(scan.settledOffset == scan.resumeOffset && scan.resumeOffset <= bytes.count, "offsets out of order")
        try require(scan.records.count == scan.frames.count && scan.frames.allSatisfy { $0.upperBound <= scan.resumeOffset }, "frames past the end")
        try require(scan.refused.map { $0.offset >= scan.resumeOffset && $0.offset < bytes.count } ?? true, "a refusal before the records read")
    }
    if !last.signatureFailed {
        try require(Array(last.records.prefix(each.records.count)).map(RecordCodec.encode) == each.records.map(RecordCodec.encode),
                    "checking each signature reads other records")
    }
    if !ownLast.signatureFailed && !ownLast.unsignedTailFailed {
        try require(Array(ownLast.records.prefix(ownEach.records.count)).map(RecordCodec.encode) == ownEach.records.map(RecordCodec.encode),
                    "checking each own nonce reads other records")
    }
    try require(Array(ownEach.records.prefix(each.records.count)).map(RecordCodec.encode) == each.records.map(RecordCodec.encode),
                "the device reads less of its own folder than another device")
    var sealer = RecordSealer(keys: SealedFuzzKeys.keys, chain: SealedFuzzKeys.origin)
    var writer = ByteWriter()
    for record in each.records { sealer.frame(record, signed: false, into: &writer) }
    sealer.mark(into: &writer)
    let framed = writer.bytes
    let again = framed.withUnsafeBytes { SealedFuzzKeys.scan($0, verifiesEach: true) }
    try require(again.records.map(RecordCodec.encode) == each.records.map(RecordCodec.encode) && again.refused == nil
                && !again.stoppedEarly, "records do not seal back")
}
