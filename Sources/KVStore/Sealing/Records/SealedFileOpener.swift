import Crypto

/// Opens and checks the sealed records of one file in order, as a scan
/// (``RecordFrame/Scanner``) meets them, continuing the file's chain from
/// where the last read left it.
///
/// Each record's seal and place in the chain are checked as it is met. Its
/// signature is checked either for each signed record (``verifiesEach``), or
/// only for the last signed record of the read: that signature covers the
/// chain before it, so one check vouches for the read (docs/sealed.md
/// § Checking signatures says which the reader does, and what it costs).
/// Records after the last signed one are not handed out: a write's last
/// record is signed, so they are a write still arriving, or not its device's.
struct SealedFileOpener {
    let keys: SealingKeys
    /// The folder's device's verifying key; nil when it is not a member.
    let verifyingKey: Curve25519.Signing.PublicKey?
    /// Whether every signed record's signature is checked, rather than the last of the read.
    let verifiesEach: Bool
    /// The chain as far as the records opened.
    private(set) var chain: RecordChain
    /// The chain at the last signed record, with its signature: where the read may end.
    private(set) var lastSigned: (chain: RecordChain, signature: [UInt8])?

    /// An opener of `device`'s file whose chain has reached `chain`.
    init(keys: SealingKeys, device: DeviceID, chain: RecordChain, verifiesEach: Bool) {
        self.keys = keys
        verifyingKey = keys.verifyingKey(of: device)
        self.verifiesEach = verifiesEach
        self.chain = chain
    }

    /// The plain record in the next frame's `payload`, or why it is refused.
    mutating func open(_ payload: UnsafeRawBufferPointer) -> Result<[UInt8], SealRefusal> {
        guard let verifyingKey else { return .failure(.notMember) }
        guard let parts = SealedRecord.Parts(payload) else { return .failure(.notSealed) }
        guard parts.index == chain.count else { return .failure(.outOfPlace(index: parts.index, expected: chain.count)) }
        let opened = parts.open(keys: keys, origin: chain.origin)
        guard case .success = opened else { return opened }
        var next = chain
        next.extend(with: parts.unsigned)
        if let signature = parts.signature {
            if verifiesEach, !SealedRecord.verify(signature, of: next.head, by: verifyingKey) { return .failure(.badSignature) }
            lastSigned = (next, Array(signature))
        }
        chain = next
        return opened
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

    /// The sealer of a new, empty file of this device's folder.
    init(keys: SealingKeys, file: SealedFile) {
        self.keys = keys
        chain = RecordChain(storeID: keys.storeID, device: keys.device, file: file)
    }

    init(keys: SealingKeys, chain: RecordChain) {
        self.keys = keys
        self.chain = chain
    }

    /// `record`'s frame, sealed (and signed when `signed`: the last record of a write, or a snapshot's end).
    mutating func frame(_ record: JournalRecord, signed: Bool) -> [UInt8] {
        var writer = ByteWriter()
        frame(record, signed: signed, into: &writer)
        return writer.bytes
    }

    /// Appends `record`'s sealed frame to `writer`, sealed in place after its header.
    mutating func frame(_ record: JournalRecord, signed: Bool, into writer: inout ByteWriter) {
        let plain = RecordCodec.encode(record)
        writer.bytes.reserveCapacity(writer.bytes.count + RecordFrame.headerSize + SealedRecord.size(sealing: plain.count, signed: signed))
        RecordFrame.append(to: &writer) { SealedRecord.seal(plain, keys: keys, chain: &chain, signed: signed, into: &$0) }
    }
}
