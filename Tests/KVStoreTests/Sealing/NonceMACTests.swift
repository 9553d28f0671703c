import Crypto
import Foundation
import Testing
@testable import KVStore

/// NonceMAC is HMAC-SHA256: its codes are swift-crypto's, for keys shorter than, as long as and longer than
/// SHA-256's block, and for messages given whole or in parts.
@Suite("Sealed records: the nonce's MAC")
struct NonceMACTests {
    @Test("NonceMAC's codes are swift-crypto's HMAC<SHA256>'s, whole and in parts, for keys of 16, 32, 64 and 100 bytes")
    func sameAsSwiftCrypto() {
        for keySize in [16, 32, 64, 100] {
            let key = SymmetricKey(data: (0..<keySize).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ keySize) })
            let mac = NonceMAC(key: key)
            for size in [0, 1, 55, 64, 65, 200, 4096] {
                let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) }
                let expected = Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
                #expect(message.withUnsafeBytes { mac.code(of: $0, prefix: 32) } == expected, "key \(keySize), message \(size)")
                let split = size / 3
                let parts = message.withUnsafeBytes { whole in
                    mac.code(of: UnsafeRawBufferPointer(rebasing: whole[..<split]), UnsafeRawBufferPointer(rebasing: whole[split...]), prefix: 12)
                }
                #expect(parts == Array(expected.prefix(12)))
            }
        }
    }
}
