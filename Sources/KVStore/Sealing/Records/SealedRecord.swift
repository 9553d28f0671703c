import Crypto
import Foundation

/// A sealed frame's payload: one plain record (``RecordCodec``'s bytes,
/// unchanged) padded, encrypted under the store key of an epoch, bound to its
/// place in its file's hash chain, and signed when it ends a write
/// (docs/sealed.md § Sealed records, docs/format.md § Sealed frames):
///
/// `u8 format (16) | u8 flags (1: signed) | u32 epoch | u64 index | 12-byte nonce | ciphertext | 16-byte tag | [64-byte signature]`
///
/// The ChaChaPoly seal authenticates the file's chain origin (store id,
/// device, file kind, generation) and the 14 bytes before the nonce, so a
/// record moved to another folder, file or index does not open; the
/// signature signs the chain's head after the record, so it vouches for every
/// record before it in the file.
enum SealedRecord {
    /// The payload's first byte: no plain record format (1 to 3) has it.
    static let format: UInt8 = 16
    /// The flags' one bit: the record is signed.
    static let signedFlag: UInt8 = 1
    /// Format, flags, epoch, index: what the seal authenticates besides the chain's origin.
    static let boundSize = 1 + 1 + 4 + 8
    static let nonceSize = 12
    static let headerSize = boundSize + nonceSize
    static let tagSize = 16
    static let signatureSize = 64
    /// The smallest padded plaintext; the buckets are in ``bucket(for:)``.
    static let smallestBucket = 64
    /// Buckets grow by powers of two up to this, then by multiples of it.
    static let largeBucketStep = 4096
    /// The shortest payload that can be a sealed record (unsigned, smallest bucket).
    static let minimumSize = headerSize + smallestBucket + tagSize

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

    /// Seals the plain record `plain` as the next record of `chain` (which it
    /// extends), signing it when `signed`.
    static func seal(_ plain: [UInt8], keys: SealingKeys, chain: inout RecordChain, signed: Bool) -> [UInt8] {
        var writer = ByteWriter(capacity: size(sealing: plain.count, signed: signed))
        seal(plain, keys: keys, chain: &chain, signed: signed, into: &writer)
        return writer.bytes
    }

    /// Appends the payload sealing `plain` as the next record of `chain` to `writer` (see ``seal(_:keys:chain:signed:)``).
    static func seal(_ plain: [UInt8], keys: SealingKeys, chain: inout RecordChain, signed: Bool, into writer: inout ByteWriter) {
        let start = writer.bytes.count
        writer.u8(format)
        writer.u8(signed ? signedFlag : 0)
        writer.u32(keys.currentEpoch)
        writer.u64(chain.count)
        var padded: [UInt8] = []
        padded.reserveCapacity(bucket(for: plain.count))
        padded += plain
        padded.append(0x80)
        padded += repeatElement(0, count: bucket(for: plain.count) - padded.count)
        var authenticated = chain.origin
        authenticated += writer.bytes[start...]
        // The membership always holds the current epoch's key: a SealingKeys without it is a broken contract.
        guard let key = keys.storeKey(epoch: keys.currentEpoch),
              let box = try? ChaChaPoly.seal(padded, using: key, authenticating: authenticated) else {
            preconditionFailure("SealingKeys lacks the key of its current epoch \(keys.currentEpoch)")
        }
        writer.bytes += box.nonce
        writer.raw(box.ciphertext)
        writer.raw(box.tag)
        writer.bytes.withUnsafeBytes { chain.extend(with: UnsafeRawBufferPointer(rebasing: $0[start...])) }
        if signed {
            guard let signature = try? keys.signingKey.signature(for: chain.head) else {
                preconditionFailure("Ed25519 signing failed")
            }
            writer.raw(signature)
        }
    }

    /// A payload's parts, as read before anything is checked.
    struct Parts {
        var signed: Bool
        var epoch: UInt32
        var index: UInt64
        /// Format, flags, epoch, index.
        var bound: UnsafeRawBufferPointer
        var nonce: UnsafeRawBufferPointer
        var ciphertext: UnsafeRawBufferPointer
        var tag: UnsafeRawBufferPointer
        /// The payload without its signature: what the chain hashes.
        var unsigned: UnsafeRawBufferPointer
        var signature: UnsafeRawBufferPointer?

        /// The parts of `payload`, or nil when it is no sealed record.
        init?(_ payload: UnsafeRawBufferPointer) {
            var reader = ByteReader(payload)
            guard let format = reader.u8(), format == SealedRecord.format, let flags = reader.u8(), flags & ~signedFlag == 0,
                  let epoch = reader.u32(), let index = reader.u64() else { return nil }
            signed = flags == signedFlag
            let signatureSize = signed ? SealedRecord.signatureSize : 0
            let ciphertextSize = payload.count - headerSize - tagSize - signatureSize
            guard ciphertextSize >= smallestBucket, let nonce = reader.raw(nonceSize), let ciphertext = reader.raw(ciphertextSize),
                  let tag = reader.raw(tagSize) else { return nil }
            self.epoch = epoch
            self.index = index
            bound = UnsafeRawBufferPointer(rebasing: payload[..<boundSize])
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
            unsigned = UnsafeRawBufferPointer(rebasing: payload[..<(payload.count - signatureSize)])
            signature = signed ? reader.raw(signatureSize) : nil
        }

        /// The plain record, or why not: the seal does not open under `keys` with the chain's `origin`.
        func open(keys: SealingKeys, origin: [UInt8]) -> Result<[UInt8], SealRefusal> {
            guard let key = keys.storeKey(epoch: epoch) else { return .failure(.unknownEpoch(epoch)) }
            guard let nonce = try? ChaChaPoly.Nonce(data: nonce),
                  let box = try? ChaChaPoly.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag),
                  let padded = try? ChaChaPoly.open(box, using: key, authenticating: origin + Array(bound)) else {
                return .failure(.doesNotOpen)
            }
            // Padding: one 0x80, then zeros.
            guard let mark = padded.lastIndex(where: { $0 != 0 }), padded[mark] == 0x80 else { return .failure(.doesNotOpen) }
            return .success(Array(padded[padded.startIndex..<mark]))
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
        case let .rolledBack(what): "the folder went back: \(what)"
        }
    }
}
