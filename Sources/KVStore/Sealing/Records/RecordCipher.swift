import CLibCrypto
import Crypto  // SymmetricKey

/// ChaCha20-Poly1305 (RFC 8439: 96-bit nonce, 128-bit tag) for sealed
/// records, through the system's libcrypto: the same cipher as
/// swift-crypto's `ChaChaPoly`, byte for byte (`RecordCipherTests` checks
/// each against the other), at a third of its cost. swift-crypto makes a new
/// AEAD context and four buffers (ciphertext, tag, the sealed box, its
/// combined form) for each seal; a record's is 128 bytes or so, and a sealed
/// write seals one, a compaction one for every record and version it keeps
/// (docs/performance.md § What sealing costs). Here a record is sealed in
/// place in the caller's buffer, with a context its owner keeps (``Context``).
///
/// The store key stays swift-crypto's `SymmetricKey`; libcrypto sees its
/// bytes for the one call.
enum RecordCipher {
    static let tagSize = 16
    static let nonceSize = 12

    /// The cipher, fetched once: libcrypto's fetched ciphers are immutable and safe to share between threads
    /// (an implicit fetch at each seal, `EVP_chacha20_poly1305()`, cost a microsecond more).
    nonisolated(unsafe) private static let cipher: OpaquePointer = {
        guard let cipher = EVP_CIPHER_fetch(nil, "ChaCha20-Poly1305", nil) else {
            preconditionFailure("the system's libcrypto has no ChaCha20-Poly1305")
        }
        return cipher
    }()

    /// A libcrypto cipher context that one owner seals or opens with, one record after another: the
    /// journal's writer, a snapshot's sealer, a reader of a file, a compaction's copying. Each use sets it
    /// up again with its nonce, and with its key only when the key or the direction changed. Kept, it spares
    /// each record a context's allocation and libcrypto's provider set-up (1.5 µs of a sealed library
    /// write), and the key's (0.2 µs more; docs/performance.md § What sealing costs). Not for two threads at once.
    final class Context {
        fileprivate let context: OpaquePointer
        /// Whether the context has the cipher: the first use gives it, the later ones only a nonce (and a key).
        private var hasCipher = false
        /// The key it was set up with last, and whether to seal: while both stay, a nonce alone sets it up.
        private var keyed: (key: SymmetricKey, sealing: Bool)?

        init() {
            guard let context = EVP_CIPHER_CTX_new() else { preconditionFailure("libcrypto could not allocate a cipher context") }
            self.context = context
        }

        deinit { EVP_CIPHER_CTX_free(context) }

        /// Sets the context up to seal (or open) with `key` and `nonce`; false when libcrypto could not.
        fileprivate func setUp(sealing: Bool, key: SymmetricKey, nonce: UnsafeRawBufferPointer) -> Bool {
            let sameKey = keyed.map { $0.sealing == sealing && $0.key == key } ?? false
            let ready = key.withUnsafeBytes { keyBytes in
                EVP_CipherInit_ex2(context, hasCipher ? nil : cipher, sameKey ? nil : bytes(keyBytes), bytes(nonce), sealing ? 1 : 0, nil) == 1
            }
            hasCipher = hasCipher || ready
            keyed = ready ? (key, sealing) : nil
            return ready
        }
    }

    /// Seals `text` in place under `key` with `nonce` (12 bytes), authenticating `authenticated`, with
    /// `context`: its plaintext becomes its ciphertext, as long, and its tag goes to `tag` (16 bytes).
    static func seal(inPlace text: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer, key: SymmetricKey,
                     nonce: UnsafeRawBufferPointer, authenticating authenticated: UnsafeRawBufferPointer, context: Context) {
        precondition(nonce.count == nonceSize && tag.count == tagSize && key.bitCount == 256,
                     "a record is sealed with a 256-bit key and a 96-bit nonce, and has a 128-bit tag")
        let out = text.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var length: Int32 = 0
        // In place: libcrypto's stream ciphers take the same buffer as input and output.
        let sealed = context.setUp(sealing: true, key: key, nonce: nonce)
            && EVP_EncryptUpdate(context.context, nil, &length, bytes(authenticated), Int32(authenticated.count)) == 1
            && EVP_EncryptUpdate(context.context, out, &length, out, Int32(text.count)) == 1
            && EVP_EncryptFinal_ex(context.context, out.map { $0 + Int(length) }, &length) == 1
            && EVP_CIPHER_CTX_ctrl(context.context, EVP_CTRL_AEAD_GET_TAG, Int32(tagSize), tag.baseAddress) == 1
        // Nothing but a failed allocation in libcrypto fails a seal of valid sizes.
        guard sealed else { preconditionFailure("libcrypto could not seal a record") }
    }

    /// The plaintext of `sealed` (ciphertext then tag) under `key` and `nonce`, authenticating
    /// `authenticated`, opened with `context`; nil when it does not open (altered, forged, another key,
    /// nonce or binding).
    static func open(_ sealed: UnsafeRawBufferPointer, key: SymmetricKey, nonce: UnsafeRawBufferPointer,
                     authenticating authenticated: UnsafeRawBufferPointer, context: Context) -> [UInt8]? {
        guard sealed.count >= tagSize, nonce.count == nonceSize, key.bitCount == 256,
              context.setUp(sealing: false, key: key, nonce: nonce) else { return nil }
        let count = sealed.count - tagSize
        var opened = false
        let plaintext = [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            var length: Int32 = 0
            // libcrypto copies the tag it is given; its parameter is not const only by its API's age.
            let tag = UnsafeMutableRawPointer(mutating: sealed.baseAddress! + count)
            opened = EVP_DecryptUpdate(context.context, nil, &length, bytes(authenticated), Int32(authenticated.count)) == 1
                && EVP_DecryptUpdate(context.context, output.baseAddress, &length, bytes(sealed), Int32(count)) == 1
                && EVP_CIPHER_CTX_ctrl(context.context, EVP_CTRL_AEAD_SET_TAG, Int32(tagSize), tag) == 1
                && EVP_DecryptFinal_ex(context.context, output.baseAddress.map { $0 + Int(length) }, &length) == 1
            initialized = count
        }
        return opened ? plaintext : nil
    }

    /// The bytes' address as libcrypto takes it (nil for an empty buffer, with its length 0).
    private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}
