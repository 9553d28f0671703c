import CLibCrypto
import Crypto  // SymmetricKey
import Foundation

/// ChaCha20-Poly1305 (RFC 8439: 96-bit nonce, 128-bit tag) for sealed
/// records, through the system's libcrypto: the same cipher as
/// swift-crypto's `ChaChaPoly`, byte for byte (`RecordCipherTests` checks
/// each against the other), at a third of its cost. swift-crypto makes a new
/// AEAD context and four buffers (ciphertext, tag, the sealed box, its
/// combined form) for each seal; a record's is 128 bytes or so, and a sealed
/// write seals one, a compaction one for every record and version it keeps
/// (docs/performance.md § What sealing costs). Here a seal writes into the
/// caller's buffer with a context of its own, so any thread may seal or open.
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

    /// A libcrypto cipher context that one owner seals with, one record after another: a writer of a
    /// segment or a snapshot (``RecordSealer``). Each seal sets it up again with its key and nonce; kept,
    /// it spares each seal a context's allocation and libcrypto's provider set-up, 1.5 µs of a sealed
    /// library write by `kvfs-bench sealed` (docs/performance.md § What sealing costs). Not for two threads at once.
    final class SealingContext {
        fileprivate let context: OpaquePointer
        /// Whether the context has the cipher: the first seal gives it, the later ones only the key and nonce.
        fileprivate var hasCipher = false

        init() {
            guard let context = EVP_CIPHER_CTX_new() else { preconditionFailure("libcrypto could not allocate a cipher context") }
            self.context = context
        }

        deinit { EVP_CIPHER_CTX_free(context) }
    }

    /// Appends `plaintext` sealed under `key` with `nonce` (12 bytes), authenticating `authenticated`, to
    /// `writer`: its ciphertext (as long as it), then its tag; with `context`, or one of its own.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: UnsafeRawBufferPointer,
                     authenticating authenticated: UnsafeRawBufferPointer, into writer: inout ByteWriter,
                     context: SealingContext = SealingContext()) {
        precondition(nonce.count == nonceSize && key.bitCount == 256, "a record is sealed with a 256-bit key and a 96-bit nonce")
        let start = writer.bytes.count
        writer.bytes.append(contentsOf: repeatElement(0, count: plaintext.count + tagSize))
        let ready = key.withUnsafeBytes { key in
            EVP_EncryptInit_ex2(context.context, context.hasCipher ? nil : cipher, bytes(key), bytes(nonce), nil) == 1
        }
        context.hasCipher = context.hasCipher || ready
        let sealed = ready && writer.bytes.withUnsafeMutableBufferPointer { output in
            let out = output.baseAddress! + start
            var length: Int32 = 0
            return EVP_EncryptUpdate(context.context, nil, &length, bytes(authenticated), Int32(authenticated.count)) == 1
                && EVP_EncryptUpdate(context.context, out, &length, bytes(plaintext), Int32(plaintext.count)) == 1
                && EVP_EncryptFinal_ex(context.context, out + Int(length), &length) == 1
                && EVP_CIPHER_CTX_ctrl(context.context, EVP_CTRL_AEAD_GET_TAG, Int32(tagSize), out + plaintext.count) == 1
        }
        // Nothing but a failed allocation in libcrypto fails a seal of valid sizes.
        guard sealed else { preconditionFailure("libcrypto could not seal a record") }
    }

    /// The plaintext of `sealed` (ciphertext then tag) under `key` and `nonce`, authenticating
    /// `authenticated`; nil when it does not open (altered, forged, another key, nonce or binding).
    static func open(_ sealed: UnsafeRawBufferPointer, key: SymmetricKey, nonce: UnsafeRawBufferPointer,
                     authenticating authenticated: UnsafeRawBufferPointer) -> Data? {
        guard sealed.count >= tagSize, nonce.count == nonceSize else { return nil }
        let count = sealed.count - tagSize
        var plaintext = Data(count: count)
        let opened = withOpeningContext(key: key, nonce: nonce) { context in
            plaintext.withUnsafeMutableBytes { output in
                let out = output.bindMemory(to: UInt8.self).baseAddress
                var length: Int32 = 0
                // libcrypto copies the tag it is given; its parameter is not const only by its API's age.
                let tag = UnsafeMutableRawPointer(mutating: sealed.baseAddress! + count)
                return EVP_DecryptUpdate(context, nil, &length, bytes(authenticated), Int32(authenticated.count)) == 1
                    && EVP_DecryptUpdate(context, out, &length, bytes(sealed), Int32(count)) == 1
                    && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagSize), tag) == 1
                    && EVP_DecryptFinal_ex(context, out.map { $0 + Int(length) }, &length) == 1
            }
        }
        return opened ? plaintext : nil
    }

    /// Runs `body` with a context of its own set up to open with `key` and `nonce`; false when it cannot be.
    private static func withOpeningContext(key: SymmetricKey, nonce: UnsafeRawBufferPointer, _ body: (OpaquePointer) -> Bool) -> Bool {
        guard nonce.count == nonceSize, key.bitCount == 256, let context = EVP_CIPHER_CTX_new() else { return false }
        defer { EVP_CIPHER_CTX_free(context) }
        let ready = key.withUnsafeBytes { key in EVP_DecryptInit_ex2(context, cipher, bytes(key), bytes(nonce), nil) == 1 }
        return ready && body(context)
    }

    /// The bytes' address as libcrypto takes it (nil for an empty buffer, with its length 0).
    private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}
