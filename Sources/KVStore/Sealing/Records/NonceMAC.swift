import Crypto

/// HMAC-SHA256 (RFC 2104) keyed once, for the nonces of a device's own
/// records (``SealedRecord/ownNonce(key:head:bound:padded:)``): the same
/// codes as swift-crypto's `HMAC<SHA256>` (`NonceMACTests` checks them
/// against it), from SHA-256 states that have taken the key's two pads, so
/// that a code hashes the message and one digest. swift-crypto's `HMAC` is
/// generic over its hash function and calls it unspecialized, copying its
/// state for each code: 1.2 µs a nonce alone, 3.4 µs of a sealed write by
/// perf in place. Its own SHA-256 states, copied, still allocated twice a
/// code (1.9 µs of a write in place); libcrypto's are values
/// (``SHA256State``, docs/performance.md § What sealing costs).
struct NonceMAC: Sendable {
    /// SHA-256 having taken the key XOR the inner pad (0x36), and XOR the outer pad (0x5c).
    private let inner: SHA256State
    private let outer: SHA256State

    /// The MAC keyed with `key` (hashed first when longer than SHA-256's 64-byte block, as RFC 2104 says).
    init(key: SymmetricKey) {
        var block = key.withUnsafeBytes { Array($0) }
        if block.count > SHA256State.blockByteCount { block = SHA256State.hash(block) }
        block += repeatElement(0, count: SHA256State.blockByteCount - block.count)
        var inner = SHA256State(), outer = SHA256State()
        inner.update(block.map { $0 ^ 0x36 })
        outer.update(block.map { $0 ^ 0x5c })
        self.inner = inner
        self.outer = outer
    }

    /// The first `count` bytes of the code of `parts`, one after the other.
    func code(of parts: UnsafeRawBufferPointer..., prefix count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { code, initialized in
            self.code(into: UnsafeMutableRawBufferPointer(code)) { hash in
                for part in parts { hash.update(part) }
            }
            initialized = count
        }
    }

    /// Writes the first `code.count` bytes of the code of what `message` hashes to `code`: a sealed
    /// record's nonce, in place in its payload. Its digests stay on the stack.
    func code(into code: UnsafeMutableRawBufferPointer, of message: (inout SHA256State) -> Void) {
        precondition(code.count <= SHA256State.byteCount, "an HMAC-SHA256 code has 32 bytes")
        withUnsafeTemporaryAllocation(byteCount: SHA256State.byteCount, alignment: 1) { digest in
            var hash = inner
            message(&hash)
            hash.finalize(into: digest)
            var outerHash = outer
            outerHash.update(UnsafeRawBufferPointer(digest))
            outerHash.finalize(into: digest)
            code.copyMemory(from: UnsafeRawBufferPointer(rebasing: digest[..<code.count]))
        }
    }
}
