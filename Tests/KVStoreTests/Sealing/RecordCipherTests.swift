import Crypto
import Foundation
import Testing
@testable import KVStore

/// RecordCipher (libcrypto's ChaCha20-Poly1305) is swift-crypto's `ChaChaPoly` byte for byte: what one
/// seals the other opens, and neither opens what was altered, or sealed under another key, nonce or binding.
@Suite("Sealed records: the cipher")
struct RecordCipherTests {
    private func seal(_ plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8], authenticating authenticated: [UInt8],
                      context: RecordCipher.Context = RecordCipher.Context()) -> [UInt8] {
        var sealed = plaintext + [UInt8](repeating: 0, count: RecordCipher.tagSize)
        sealed.withUnsafeMutableBytes { sealed in
            nonce.withUnsafeBytes { nonce in
                authenticated.withUnsafeBytes {
                    RecordCipher.seal(inPlace: UnsafeMutableRawBufferPointer(rebasing: sealed[..<plaintext.count]),
                                      tag: UnsafeMutableRawBufferPointer(rebasing: sealed[plaintext.count...]), key: key, nonce: nonce,
                                      authenticating: $0, context: context)
                }
            }
        }
        return sealed
    }

    private func open(_ sealed: [UInt8], key: SymmetricKey, nonce: [UInt8], authenticating authenticated: [UInt8],
                      context: RecordCipher.Context = RecordCipher.Context()) -> Data? {
        sealed.withUnsafeBytes { sealed in
            nonce.withUnsafeBytes { nonce in
                authenticated.withUnsafeBytes { RecordCipher.open(sealed, key: key, nonce: nonce, authenticating: $0, context: context) }
            }
        }.map { Data($0) }
    }

    @Test("what RecordCipher seals is ChaChaPoly's seal, and each opens the other's, at every size a record's bucket takes")
    func sameAsSwiftCrypto() throws {
        let key = SymmetricKey(size: .bits256)
        for size in [0, 1, 63, 64, 65, 128, 4096, 8192 + 17] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let nonce = (0..<12).map { UInt8($0 + size % 7) }, authenticated = Array("origin and bound \(size)".utf8)
            let ours = seal(plaintext, key: key, nonce: nonce, authenticating: authenticated)
            let theirs = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: authenticated)
            #expect(ours == Array(theirs.ciphertext) + Array(theirs.tag), "size \(size)")
            #expect(open(Array(theirs.ciphertext) + Array(theirs.tag), key: key, nonce: nonce, authenticating: authenticated) == Data(plaintext))
            let box = try ChaChaPoly.SealedBox(combined: nonce + ours)
            #expect(try ChaChaPoly.open(box, using: key, authenticating: authenticated) == Data(plaintext))
        }
    }

    @Test("one context, kept from record to record as a writer or a reader keeps it, seals and opens each as a context of its own would, whatever its key, direction, nonce and size")
    func aKeptContextSealsAsAFreshOne() throws {
        let context = RecordCipher.Context()
        let keys = [SymmetricKey(size: .bits256), SymmetricKey(size: .bits256)]
        // The same key several times running (a nonce alone sets the context up), then the other, and back.
        let uses = [(0, 300), (0, 0), (0, 17), (1, 64), (1, 4096), (0, 1), (0, 256), (1, 8192 + 17), (0, 100), (0, 100)]
        for (index, (keyIndex, size)) in uses.enumerated() {
            let key = keys[keyIndex]
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ index) }
            let nonce = (0..<12).map { UInt8($0 * 3 + index) }, authenticated = Array("record \(index)".utf8)
            let kept = seal(plaintext, key: key, nonce: nonce, authenticating: authenticated, context: context)
            let theirs = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: authenticated)
            #expect(kept == Array(theirs.ciphertext) + Array(theirs.tag), "seal \(index), \(size) bytes")
            #expect(kept == seal(plaintext, key: key, nonce: nonce, authenticating: authenticated), "seal \(index), \(size) bytes")
            // Opened with the same context: from sealing to opening, with the same key, then again with the other.
            #expect(open(kept, key: key, nonce: nonce, authenticating: authenticated, context: context) == Data(plaintext), "open \(index)")
            #expect(open(kept, key: keys[1 - keyIndex], nonce: nonce, authenticating: authenticated, context: context) == nil, "open \(index), the other key")
            #expect(open(kept, key: key, nonce: nonce, authenticating: authenticated, context: context) == Data(plaintext), "open \(index) again")
        }
    }

    @Test("a seal altered in any byte, or opened with another key, nonce or binding, does not open")
    func refusesWhatIsNotItsOwn() {
        let key = SymmetricKey(size: .bits256)
        let plaintext = Array("a record, padded".utf8), nonce = [UInt8](repeating: 7, count: 12), authenticated = Array("bound".utf8)
        let sealed = seal(plaintext, key: key, nonce: nonce, authenticating: authenticated)
        #expect(open(sealed, key: key, nonce: nonce, authenticating: authenticated) == Data(plaintext))
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 0x01
            #expect(open(altered, key: key, nonce: nonce, authenticating: authenticated) == nil, "byte \(index) altered")
        }
        #expect(open(sealed, key: SymmetricKey(size: .bits256), nonce: nonce, authenticating: authenticated) == nil)
        #expect(open(sealed, key: key, nonce: [UInt8](repeating: 8, count: 12), authenticating: authenticated) == nil)
        #expect(open(sealed, key: key, nonce: nonce, authenticating: Array("other".utf8)) == nil)
        #expect(open(Array(sealed.prefix(15)), key: key, nonce: nonce, authenticating: authenticated) == nil, "shorter than a tag")
        #expect(open(sealed, key: key, nonce: [UInt8](repeating: 7, count: 11), authenticating: authenticated) == nil, "a nonce of 11 bytes")
        #expect(open(sealed, key: SymmetricKey(size: .bits128), nonce: nonce, authenticating: authenticated) == nil, "a 128-bit key")
    }
}
