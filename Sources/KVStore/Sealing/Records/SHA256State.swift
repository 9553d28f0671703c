import CLibCrypto

/// SHA-256 as a value: libcrypto's `SHA256_CTX`, a C struct of 112 bytes
/// that a copy duplicates in place. A sealed record takes two hashes (its
/// chain's, ``RecordChain``, and its nonce's MAC, ``NonceMAC``, which starts
/// from a state keyed once); swift-crypto's `SHA256` keeps its state in a
/// class, so each copy's first update allocated a new one, and each digest
/// another: 1.9 µs of a sealed library write by perf, in place, for the two
/// (docs/performance.md § What sealing costs).
struct SHA256State: Sendable {
    /// The digest's length.
    static let byteCount = 32
    /// The block the hash compresses, and the HMAC key's length after padding.
    static let blockByteCount = 64

    private var context = SHA256_CTX()

    /// A hash of nothing yet.
    init() {
        // SHA256_Init only sets the initial constants; it cannot fail.
        SHA256_Init(&context)
    }

    /// Hashes `bytes` after what it took so far.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        SHA256_Update(&context, bytes.baseAddress, bytes.count)
    }

    /// Hashes `bytes` after what it took so far.
    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything it took.
    consuming func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.byteCount) { digest, count in
            finalize(into: UnsafeMutableRawBufferPointer(digest))
            count = Self.byteCount
        }
    }

    /// Writes the digest of everything it took to `digest` (32 bytes), allocating nothing: a sealed
    /// record's nonce and chain take three digests each.
    consuming func finalize(into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count == Self.byteCount, "a SHA-256 digest takes 32 bytes")
        SHA256_Final(digest.baseAddress?.assumingMemoryBound(to: UInt8.self), &context)
    }

    /// The digest of `bytes`.
    static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var state = SHA256State()
        state.update(bytes)
        return state.finalize()
    }
}
