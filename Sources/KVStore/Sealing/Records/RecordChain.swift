/// Which file of a device's folder a sealed record lies in: bound into its
/// seal and its hash chain, so that a record copied into another file (or
/// the same file of another generation) is refused (docs/sealed.md § Sealed records).
struct SealedFile: Hashable, Sendable {
    /// A segment or a snapshot; its raw value is what the chain's origin hashes.
    enum Kind: UInt8, Sendable {
        case segment = 1
        case snapshot = 2
    }

    var kind: Kind
    /// The file's generation (`journal-<G>.log`, `snapshot-<G>.snap`).
    var generation: UInt64

    init(kind: Kind, generation: UInt64) {
        self.kind = kind
        self.generation = generation
    }
}

/// One file's hash chain, as far as it has been read or written: its origin
/// `h_0 = SHA-256("kvfs sealed 1", store id, device, file kind, generation)`,
/// the head `h_i = SHA-256(h_{i-1}, payload_i without its signature)` and
/// the number `i` of records it covers. A record's signature signs its head,
/// so one signature vouches for every record before it in the file; the
/// records after the last signature wait for the next (docs/sealed.md
/// § Signing at sync points).
struct RecordChain: Equatable, Sendable {
    /// `h_0`: what every seal of the file binds as authenticated data.
    let origin: [UInt8]
    /// `h_i`, the head after the last record covered.
    private(set) var head: [UInt8]
    /// `i`: how many records the chain covers; the next record's index.
    private(set) var count: UInt64
    /// Whether a signature covers the head: the last record covered is signed (or a mark), or it covers none.
    private(set) var isSigned = true

    /// The domain separation of every origin: no other hash of kvfs starts so.
    private static let label = Array("kvfs sealed 1".utf8)

    /// The chain of an empty file: its origin, covering nothing.
    init(storeID: String, device: DeviceID, file: SealedFile) {
        var hash = SHA256State()
        var fields = ByteWriter()
        fields.raw(Self.label)
        fields.string(storeID)
        fields.raw(device.bytes)
        fields.u8(file.kind.rawValue)
        fields.u64(file.generation)
        hash.update(fields.bytes)
        origin = hash.finalize()
        head = origin
        count = 0
    }

    /// The chain one record longer: `payload` is the record's sealed payload without its signature.
    mutating func extend(with payload: UnsafeRawBufferPointer) {
        var hash = SHA256State()
        hash.update(head)
        hash.update(payload)
        head.withUnsafeMutableBytes { hash.finalize(into: $0) }  // in place: a chain's head is hashed at every record
        count += 1
        isSigned = false
    }

    /// Notes that the record just covered carries the signature of the head.
    mutating func signed() {
        isSigned = true
    }
}
