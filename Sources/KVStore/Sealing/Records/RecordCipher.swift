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

    /// Appends `plaintext` sealed under `key` with `nonce` (12 bytes), authenticating `authenticated`, to
    /// `writer`: its ciphertext (as long as it), then its tag.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: UnsafeRawBufferPointer,
                     authenticating authenticated: UnsafeRawBufferPointer, into writer: inout ByteWriter) {
        let start = writer.bytes.count
        writer.bytes.append(contentsOf: repeatElement(0, count: plaintext.count + tagSize))
        let sealed = withContext(key: key, nonce: nonce, encrypting: true) { context in
            writer.bytes.withUnsafeMutableBufferPointer { output in
                let out = output.baseAddress! + start
                var length: Int32 = 0
                return EVP_EncryptUpdate(context, nil, &length, bytes(authenticated), Int32(authenticated.count)) == 1
                    && EVP_EncryptUpdate(context, out, &length, bytes(plaintext), Int32(plaintext.count)) == 1
                    && EVP_EncryptFinal_ex(context, out + Int(length), &length) == 1
                    && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tagSize), out + plaintext.count) == 1
            }
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
        let opened = withContext(key: key, nonce: nonce, encrypting: false) { context in
            plaintext.withUnsafeMutableBytes { output in
                let out = output.bindMemory(to: UInt8.self).baseAddress
                var length: Int32 = 0
                var tag = Array(sealed[count...])
                return EVP_DecryptUpdate(context, nil, &length, bytes(authenticated), Int32(authenticated.count)) == 1
                    && EVP_DecryptUpdate(context, out, &length, bytes(sealed), Int32(count)) == 1
                    && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagSize), &tag) == 1
                    && EVP_DecryptFinal_ex(context, out.map { $0 + Int(length) }, &length) == 1
            }
        }
        return opened ? plaintext : nil
    }

    /// Runs `body` with a context set up for `key` and `nonce`, to encrypt or decrypt; false when it cannot be.
    private static func withContext(key: SymmetricKey, nonce: UnsafeRawBufferPointer, encrypting: Bool,
                                    _ body: (OpaquePointer) -> Bool) -> Bool {
        guard nonce.count == nonceSize, key.bitCount == 256, let context = EVP_CIPHER_CTX_new() else { return false }
        defer { EVP_CIPHER_CTX_free(context) }
        let ready = key.withUnsafeBytes { key in
            encrypting ? EVP_EncryptInit_ex2(context, cipher, bytes(key), bytes(nonce), nil) == 1
                : EVP_DecryptInit_ex2(context, cipher, bytes(key), bytes(nonce), nil) == 1
        }
        return ready && body(context)
    }

    /// The bytes' address as libcrypto takes it (nil for an empty buffer, with its length 0).
    private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}
