import Crypto
import Foundation

/// Opens and checks the sealed records of one file in order, as a scan
/// (``RecordFrame/Scanner``) meets them, continuing the file's chain from
/// where the last read left it.
///
/// Each record's seal and place in the chain are checked as it is met. Its
/// signature is checked either for each signed record (``verifiesEach``), or
/// only for the last signed record of the read: that signature covers the
/// chain before it, so one check vouches for the read (docs/sealed.md
/// § Checking signatures says which the reader does, and what it costs).
/// Records after the last signed one are not handed out: they wait for their
/// device's next mark (docs/sealed.md § Signing at sync points), or are not
/// its device's.
///
/// A device reading its own folder (``ownNonceKey``) hands out its own
/// unsigned records as well: those whose nonce it made
/// (``SealedRecord/ownNonce(key:head:bound:padded:)``), which its other
/// processes wrote and have not signed yet. The nonce of the last of them
/// covers the chain before it, as a signature does, so only that one is
/// checked, unless ``verifiesEach``.
struct SealedFileOpener {
    let keys: SealingKeys
    /// The folder's device's verifying key; nil when it is not a member.
    let verifyingKey: Curve25519.Signing.PublicKey?
    /// Whether every signed record's signature (and, in the device's own folder, every unsigned record's
    /// nonce) is checked, rather than the last of the read.
    let verifiesEach: Bool
    /// This device's own nonce key, when the file is a segment of its own folder; nil otherwise.
    let ownNonceKey: NonceMAC?
    /// The chain as far as the records opened.
    private(set) var chain: RecordChain
    /// The chain at the last signed record, with its signature.
    private(set) var lastSigned: (chain: RecordChain, signature: [UInt8])?
    /// In the device's own folder, the last unsigned record after the last signed one, to check at the
    /// read's end: the chain's head before it, its bound bytes, its padded plaintext and its nonce.
    private var lastUnsigned: (head: [UInt8], bound: [UInt8], padded: [UInt8], nonce: [UInt8])?
    /// Checking each: whether the record just opened is the device's own, as is every unsigned one since the last signed.
    private var ownSoFar = true
    /// The epoch the record opened last was sealed under.
    private(set) var lastEpoch: UInt32 = 0
    /// The cipher context its records are opened with, one after another.
    private let cipher = RecordCipher.Context()

    /// An opener of `device`'s file whose chain has reached `chain`; `ownFolder` when the file is a
    /// segment of this device's own folder, read by this device.
    init(keys: SealingKeys, device: DeviceID, chain: RecordChain, verifiesEach: Bool, ownFolder: Bool = false) {
        self.keys = keys
        verifyingKey = keys.verifyingKey(of: device)
        self.verifiesEach = verifiesEach
        ownNonceKey = ownFolder && device == keys.device ? keys.ownNonceMAC : nil
        self.chain = chain
    }

    /// The plain record in the next frame's `payload` (nil for a mark), or why it is refused.
    mutating func open(_ payload: UnsafeRawBufferPointer) -> Result<[UInt8]?, SealRefusal> {
        guard let verifyingKey else { return .failure(.notMember) }
        guard let parts = SealedRecord.Parts(payload) else { return .failure(.notSealed) }
        guard parts.index == chain.count else { return .failure(.outOfPlace(index: parts.index, expected: chain.count)) }
        var opened: SealedRecord.Opened?
        if !parts.isMark {
            switch parts.openPadded(keys: keys, origin: chain.origin, cipher: cipher) {
            case let .success(record): opened = record
            case let .failure(reason): return .failure(reason)
            }
            lastEpoch = parts.epoch
        }
        var next = chain
        next.extend(with: parts.unsigned)
        if let signature = parts.signature {
            if verifiesEach, !SealedRecord.verify(signature, of: next.head, by: verifyingKey) { return .failure(.badSignature) }
            next.signed()
            lastSigned = (next, Array(signature))
            (lastUnsigned, ownSoFar) = (nil, true)
        } else if let ownNonceKey, let opened {
            if verifiesEach {
                ownSoFar = ownSoFar && parts.hasOwnNonce(key: ownNonceKey, head: chain.head, padded: opened.padded)
            } else {
                lastUnsigned = (chain.head, Array(parts.bound), opened.padded, Array(parts.nonce))
            }
        }
        chain = next
        return .success(opened?.plain)
    }

    /// Whether the read may end after the record just opened: it is signed (or a mark), or, checking each
    /// in the device's own folder, it and every unsigned record since the last signed one are its own.
    var isVouched: Bool { chain.isSigned || (verifiesEach && ownNonceKey != nil && ownSoFar) }

    /// In the device's own folder, not checking each: whether the unsigned records after the last signed
    /// one are its own (the last one's nonce is: it covers the chain before it); nil when there are none.
    var unsignedTailIsOwn: Bool? {
        guard let ownNonceKey, let last = lastUnsigned else { return nil }
        return last.bound.withUnsafeBytes { SealedRecord.ownNonce(key: ownNonceKey, head: last.head, bound: $0, padded: last.padded) } == last.nonce
    }

    /// Whether the last signed record's signature is its device's (true when there is none).
    func lastSignatureHolds() -> Bool {
        guard let lastSigned, let verifyingKey else { return true }
        return verifiesEach || lastSigned.signature.withUnsafeBytes { SealedRecord.verify($0, of: lastSigned.chain.head, by: verifyingKey) }
    }
}

/// Seals this device's records as the next ones of one file, for the
/// journal's writer and its compaction's snapshot.
struct RecordSealer {
    let keys: SealingKeys
    /// The file's chain as far as it was written.
    var chain: RecordChain
    /// The cipher context its seals use: the journal's writer keeps one from write to write.
    let cipher: RecordCipher.Context

    /// The sealer of a new, empty file of this device's folder.
    init(keys: SealingKeys, file: SealedFile) {
        self.init(keys: keys, chain: RecordChain(storeID: keys.storeID, device: keys.device, file: file))
    }

    /// The sealer of a file whose chain is `chain`, sealing with `cipher`.
    init(keys: SealingKeys, chain: RecordChain, cipher: RecordCipher.Context = RecordCipher.Context()) {
        self.keys = keys
        self.chain = chain
        self.cipher = cipher
    }

    /// `record`'s frame, sealed (and signed when `signed`: a snapshot's end, or a segment's close mark).
    mutating func frame(_ record: JournalRecord, signed: Bool) -> [UInt8] {
        var writer = ByteWriter()
        frame(record, signed: signed, into: &writer)
        return writer.bytes
    }

    /// Appends `record`'s sealed frame to `writer`, sealed in place after its header. Returns the size of
    /// its plain frame: what the record takes unsealed (``JournalWriter/segmentPlainBytes``).
    @discardableResult
    mutating func frame(_ record: JournalRecord, signed: Bool, into writer: inout ByteWriter) -> Int {
        var count = 0
        RecordFrame.append(to: &writer) { count = SealedRecord.seal(record, keys: keys, chain: &chain, signed: signed, cipher: cipher, into: &$0) }
        return RecordFrame.headerSize + count
    }

    /// Appends a mark's frame to `writer`: the signature of the chain so far (``SealedRecord/mark(keys:chain:into:)``).
    mutating func mark(into writer: inout ByteWriter) {
        RecordFrame.append(to: &writer) { SealedRecord.mark(keys: keys, chain: &chain, into: &$0) }
    }
}
