import Crypto
import Testing
@testable import KVStore

/// SHA256State is SHA-256: its digests are swift-crypto's, taken whole, in parts, and from a copy of a state
/// that has taken some bytes already (as NonceMAC takes its keyed states), the original left as it was.
@Suite("Sealed records: SHA-256 as a value")
struct SHA256StateTests {
    @Test("SHA256State's digests are swift-crypto's SHA256's for 0 to 300 bytes, whole and in two parts")
    func sameAsSwiftCrypto() {
        for size in 0...300 {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) }
            let expected = Array(SHA256.hash(data: message))
            #expect(SHA256State.hash(message) == expected, "\(size) bytes")
            var parts = SHA256State()
            message.withUnsafeBytes { whole in
                parts.update(UnsafeRawBufferPointer(rebasing: whole[..<(size / 3)]))
                parts.update(UnsafeRawBufferPointer(rebasing: whole[(size / 3)...]))
            }
            #expect(parts.finalize() == expected, "\(size) bytes in two parts")
        }
    }

    @Test("a copy of a state goes on from it, and leaves it as it was")
    func copiesAreIndependent() {
        var keyed = SHA256State()
        keyed.update(Array(repeating: 0x36, count: 64))
        var first = keyed, second = keyed
        first.update([1, 2, 3])
        second.update([4, 5])
        #expect(first.finalize() == Array(SHA256.hash(data: Array(repeating: 0x36, count: 64) + [1, 2, 3])))
        #expect(second.finalize() == Array(SHA256.hash(data: Array(repeating: 0x36, count: 64) + [4, 5])))
        #expect(keyed.finalize() == Array(SHA256.hash(data: Array(repeating: 0x36, count: 64))))
    }
}
