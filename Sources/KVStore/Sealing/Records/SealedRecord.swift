import Crypto

/// A sealed frame's payload: one plain record (``RecordCodec``'s bytes,
/// unchanged) padded, encrypted under the store key of an epoch, bound to its
/// place in its file's hash chain, and signed when it ends a snapshot or
/// closes a segment; or a **mark**, which carries no record and signs the
/// chain's head at a sync point (docs/sealed.md § Sealed records,
/// docs/format.md § Sealed frames):
///
/// `u8 format (16) | u8 flags (1: signed) | u32 epoch | u64 index | 12-byte nonce | ciphertext | 16-byte tag | [64-byte signature]`
///
/// a mark: `u8 format (16) | u8 flags (3: signed, mark) | u32 epoch | u64 index | 64-byte signature`
///
/// The ChaChaPoly seal authenticates the file's chain origin (store id,
/// device, file kind, generation) and the 14 bytes before the nonce, so a
/// record moved to another folder, file or index does not open; a signature
/// signs the chain's head after its record, so it vouches for every record
/// before it in the file. The nonce is not random: it is the device's own MAC
/// (``ownNonce(key:head:bound:padded:)``) of the chain's head before the
/// record, its bound bytes and its padded plaintext, so the device can tell
/// its own unsigned records from anyone else's.
enum SealedRecord {
    /// The payload's first byte: no plain record format (1 to 3) has it.
    static let format: UInt8 = 16
    /// The flags' first bit: the record is signed.
    static let signedFlag: UInt8 = 1
    /// The flags' second bit: a mark, carrying no record (always signed).
    static let markFlag: UInt8 = 2
    /// Format, flags, epoch, index: what the seal authenticates besides the chain's origin.
    static let boundSize = 1 + 1 + 4 + 8
    static let nonceSize = RecordCipher.nonceSize
    static let headerSize = boundSize + nonceSize
    static let tagSize = RecordCipher.tagSize
    static let signatureSize = 64
    /// A mark's payload: its bound bytes and its signature.
    static let markSize = boundSize + signatureSize
    /// The smallest padded plaintext; the buckets are in ``bucket(for:)``.
    static let smallestBucket = 64
    /// Buckets grow by powers of two up to this, then by multiples of it.
    static let largeBucketStep = 4096
    /// The shortest payload that can be a sealed record (unsigned, smallest bucket).
    static let minimumSize = headerSize + smallestBucket + tagSize

    /// Whether a payload of `length` bytes whose flags are `flags` may be a sealed record or a mark: what
    /// a scan's resynchronization takes as a candidate (``RecordFrame``).
    static func looksSealed(flags: UInt8, length: Int) -> Bool {
        if flags == signedFlag | markFlag { return length == markSize }
        return flags & ~signedFlag == 0 && length >= minimumSize + (flags == signedFlag ? signatureSize : 0)
    }

    /// The padded size of a plain record of `length` bytes (with its one
    /// byte of padding's mark): 64, then powers of two up to 4 KiB, then
    /// multiples of 4 KiB. A reader of the folder learns only that.
    static func bucket(for length: Int) -> Int {
        let needed = length + 1
        if needed <= smallestBucket { return smallestBucket }
        if needed <= largeBucketStep { return 1 << (Int.bitWidth - (needed - 1).leadingZeroBitCount) }
        return (needed + largeBucketStep - 1) / largeBucketStep * largeBucketStep
    }

    /// The size of the payload that seals a plain record of `length` bytes.
    static func size(sealing length: Int, signed: Bool) -> Int {
        headerSize + bucket(for: length) + tagSize + (signed ? signatureSize : 0)
    }

    /// Appends the payload sealing `record` as the next record of `chain` (which it extends) to `writer`
    /// with `cipher`, signing it when `signed`. Returns the length of the plain record it seals.
    ///
    /// Everything is done in place in `writer`, in the payload's layout: the bound bytes, room for the
    /// nonce, the record encoded and padded, room for the tag; then the nonce's MAC is taken of the chain's
    /// head and those bytes, and the padded record sealed where it lies. A buffer for the MAC's message,
    /// another for the ciphertext, and arrays for the nonce and the digests were 8% of a sealed frame's
    /// instructions by callgrind (docs/performance.md § What sealing costs).
    static func seal(_ record: JournalRecord, keys: SealingKeys, chain: inout RecordChain, signed: Bool,
                     cipher: RecordCipher.Context, into writer: inout ByteWriter) -> Int {
        let capacity = RecordCodec.capacity(for: record)
        writer.bytes.reserveCapacity(writer.bytes.count + size(sealing: capacity, signed: signed))
        let start = writer.bytes.count
        writeBound(flags: signed ? signedFlag : 0, keys: keys, chain: chain, into: &writer)
        writer.zeros(nonceSize)
        let paddedStart = writer.bytes.count
        RecordCodec.encode(record, into: &writer)
        let count = writer.bytes.count - paddedStart
        writer.u8(0x80)
        writer.zeros(bucket(for: count) - count - 1 + tagSize)
        // The membership always holds the current epoch's key: a SealingKeys without it is a broken contract.
        guard let key = keys.storeKey(epoch: keys.currentEpoch) else {
            preconditionFailure("SealingKeys lacks the key of its current epoch \(keys.currentEpoch)")
        }
        writer.bytes.withUnsafeMutableBytes { payload in
            let bound = UnsafeRawBufferPointer(rebasing: payload[start..<start + boundSize])
            let nonce = UnsafeMutableRawBufferPointer(rebasing: payload[start + boundSize..<paddedStart])
            let padded = UnsafeMutableRawBufferPointer(rebasing: payload[paddedStart..<payload.count - tagSize])
            chain.head.withUnsafeBytes { head in
                keys.ownNonceMAC.code(into: nonce) { hash in
                    hash.update(head)
                    hash.update(bound)
                    hash.update(UnsafeRawBufferPointer(padded))
                }
            }
            withAuthenticated(origin: chain.origin, bound: bound) {
                RecordCipher.seal(inPlace: padded, tag: UnsafeMutableRawBufferPointer(rebasing: payload[(payload.count - tagSize)...]),
                                  key: key, nonce: UnsafeRawBufferPointer(nonce), authenticating: $0, context: cipher)
            }
            chain.extend(with: UnsafeRawBufferPointer(rebasing: payload[start...]))
        }
        if signed { sign(&chain, keys: keys, into: &writer) }
        return count
    }

    /// Runs `body` with what a seal authenticates, the chain's origin then the bound bytes, in one buffer on the stack.
    private static func withAuthenticated<T>(origin: [UInt8], bound: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        withUnsafeTemporaryAllocation(byteCount: origin.count + bound.count, alignment: 1) { buffer in
            origin.withUnsafeBytes { buffer.copyMemory(from: $0) }
            UnsafeMutableRawBufferPointer(rebasing: buffer[origin.count...]).copyMemory(from: bound)
            return body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Appends a mark to `writer`: the next entry of `chain`, carrying no record, whose signature vouches
    /// for every record before it in the file (docs/sealed.md § Signing at sync points).
    static func mark(keys: SealingKeys, chain: inout RecordChain, into writer: inout ByteWriter) {
        let start = writer.bytes.count
        writeBound(flags: signedFlag | markFlag, keys: keys, chain: chain, into: &writer)
        writer.bytes.withUnsafeBytes { chain.extend(with: UnsafeRawBufferPointer(rebasing: $0[start...])) }
        sign(&chain, keys: keys, into: &writer)
    }

    /// Format, flags, epoch and the chain's next index: the bytes a seal authenticates after the origin.
    private static func writeBound(flags: UInt8, keys: SealingKeys, chain: RecordChain, into writer: inout ByteWriter) {
        writer.u8(format)
        writer.u8(flags)
        writer.u32(keys.currentEpoch)
        writer.u64(chain.count)
    }

    /// Appends the device's signature of the chain's head, which the record just written ends.
    private static func sign(_ chain: inout RecordChain, keys: SealingKeys, into writer: inout ByteWriter) {
        guard let signature = try? keys.signingKey.signature(for: chain.head) else {
            preconditionFailure("Ed25519 signing failed")
        }
        writer.raw(signature)
        chain.signed()
    }

    /// The nonce of a record: the first 12 bytes of HMAC-SHA256 under the device's own nonce key of the
    /// chain's head before it, its bound bytes and its padded plaintext. Unique for each place and
    /// content, as a random one would be, and only the device can make it.
    static func ownNonce(key: NonceMAC, head: [UInt8], bound: UnsafeRawBufferPointer, padded: [UInt8]) -> [UInt8] {
        head.withUnsafeBytes { head in padded.withUnsafeBytes { key.code(of: head, bound, $0, prefix: nonceSize) } }
    }

    /// A payload's parts, as read before anything is checked.
    struct Parts {
        var signed: Bool
        /// Whether it is a mark: no record, only a signature (its nonce, ciphertext and tag are empty).
        var isMark: Bool
        var epoch: UInt32
        var index: UInt64
        /// Format, flags, epoch, index.
        var bound: UnsafeRawBufferPointer
        /// Nonce, ciphertext and tag, one after the other (a sealed box's combined form).
        var sealed: UnsafeRawBufferPointer
        var nonce: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: sealed.prefix(isMark ? 0 : nonceSize)) }
        /// The payload without its signature: what the chain hashes.
        var unsigned: UnsafeRawBufferPointer
        var signature: UnsafeRawBufferPointer?

        /// The parts of `payload`, or nil when it is no sealed record.
        init?(_ payload: UnsafeRawBufferPointer) {
            var reader = ByteReader(payload)
            guard let format = reader.u8(), format == SealedRecord.format, let flags = reader.u8(),
                  SealedRecord.looksSealed(flags: flags, length: payload.count),
                  let epoch = reader.u32(), let index = reader.u64() else { return nil }
            signed = flags & signedFlag != 0
            isMark = flags & markFlag != 0
            let signatureSize = signed ? SealedRecord.signatureSize : 0
            guard let sealed = reader.raw(payload.count - boundSize - signatureSize) else { return nil }
            self.epoch = epoch
            self.index = index
            bound = UnsafeRawBufferPointer(rebasing: payload[..<boundSize])
            self.sealed = sealed
            unsigned = UnsafeRawBufferPointer(rebasing: payload[..<(payload.count - signatureSize)])
            signature = signed ? reader.raw(signatureSize) : nil
        }

        /// The padded plain record (the record, `0x80`, zeros), or why not: the seal does not open under
        /// `keys` with the chain's `origin` (a mark has none). Opened with `cipher`, which its reader keeps.
        func openPadded(keys: SealingKeys, origin: [UInt8], cipher: RecordCipher.Context) -> Result<Opened, SealRefusal> {
            guard !isMark else { return .failure(.doesNotOpen) }
            guard let key = keys.storeKey(epoch: epoch) else { return .failure(.unknownEpoch(epoch)) }
            guard let padded = withAuthenticated(origin: origin, bound: bound, {
                RecordCipher.open(UnsafeRawBufferPointer(rebasing: sealed.dropFirst(nonceSize)), key: key, nonce: nonce,
                                  authenticating: $0, context: cipher)
            }), let count = SealedRecord.unpaddedCount(padded) else {
                return .failure(.doesNotOpen)
            }
            return .success(Opened(padded: padded, count: count))
        }

        /// The plain record, or why not (``openPadded(keys:origin:cipher:)``).
        func open(keys: SealingKeys, origin: [UInt8], cipher: RecordCipher.Context) -> Result<[UInt8], SealRefusal> {
            openPadded(keys: keys, origin: origin, cipher: cipher).map(\.plain)
        }

        /// Whether the record's nonce is this device's (``ownNonce(key:head:bound:padded:)``), `head` being
        /// the chain's head before it: then the device wrote it, signed or not.
        func hasOwnNonce(key: NonceMAC, head: [UInt8], padded: [UInt8]) -> Bool {
            !isMark && ownNonce(key: key, head: head, bound: bound, padded: padded).elementsEqual(nonce)
        }
    }

    /// An opened record: its padded plaintext (the record, `0x80`, zeros), and the record's length in it,
    /// found once as its padding was checked.
    struct Opened {
        let padded: [UInt8]
        let count: Int
        /// The plain record.
        var plain: [UInt8] { Array(padded.prefix(count)) }
    }

    /// The length of the record in `padded`: before its one `0x80` followed by zeros; nil when the padding is not so.
    static func unpaddedCount(_ padded: [UInt8]) -> Int? {
        padded.withUnsafeBytes { bytes in
            var end = bytes.count
            while end > 0, bytes[end - 1] == 0 { end -= 1 }
            return end > 0 && bytes[end - 1] == 0x80 ? end - 1 : nil
        }
    }

    /// Whether `signature` is `device`'s signature of the chain head `head`.
    static func verify(_ signature: UnsafeRawBufferPointer, of head: [UInt8], by key: Curve25519.Signing.PublicKey) -> Bool {
        key.isValidSignature(Array(signature), for: head)
    }
}

/// Why a sealed folder's record was refused: nothing from it on is merged
/// (docs/sealed.md § Refusals).
enum SealRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The folder's device is not a member of the store.
    case notMember
    /// A plain record where only sealed ones may be.
    case notSealed
    /// Sealed under an epoch this device has no key of.
    case unknownEpoch(UInt32)
    /// Not at its place: its index is not the file's next (replayed, reordered, or a record before it removed).
    case outOfPlace(index: UInt64, expected: UInt64)
    /// The seal does not open: forged without the store key, altered, or copied from another folder or file.
    case doesNotOpen
    /// The signature is not the folder's device's (a member wrote into another's folder, or it was altered).
    case badSignature
    /// In this device's own folder, an unsigned record whose nonce is not the device's: another member put it there.
    case notOwn
    /// The folder holds less than this device read of it already.
    case rolledBack(String)

    var description: String {
        switch self {
        case .notMember: "its device is not a member of the sealed store"
        case .notSealed: "a plain record in a sealed store"
        case let .unknownEpoch(epoch): "sealed under epoch \(epoch), whose key this device does not have"
        case let .outOfPlace(index, expected): "record \(index) where record \(expected) must be (replayed or reordered)"
        case .doesNotOpen: "its seal does not open (forged, altered, or copied from another folder or file)"
        case .badSignature: "its signature is not its device's (forged by another member, or altered)"
        case .notOwn: "an unsigned record this device did not write (its nonce is not this device's: another member put it in this device's folder); it is never signed nor merged, and is cut off"
        case let .rolledBack(what): "the folder went back: \(what)"
        }
    }
}
