import Crypto
import Foundation

/// A sealed store's recovery key: 32 random bytes, printed once as 32 words
/// when the store is sealed, kept by the person on paper. It derives (HKDF-SHA256)
/// an Ed25519 and an X25519 key, registered in the roster as a member that
/// writes no records: it signs the genesis, every version wraps the store key
/// for it, and with it a new machine joins when every machine is lost
/// (`kvfs join --recovery-key`; docs/sealed.md § Recovery key).
public struct RecoveryKey: Sendable {
    let secret: [UInt8]

    /// Its words, to print once and keep.
    public var words: String { WordCode.words(for: secret) }

    static func random() -> RecoveryKey {
        RecoveryKey(secret: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    init(secret: [UInt8]) { self.secret = secret }

    /// The recovery key `words` spell (32 of ``WordCode``'s words).
    public init(words: String) throws(MembershipError) {
        secret = try WordCode.bytes(from: words, count: 32)
    }

    private func derived(_ purpose: String) -> Data {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), salt: Array("kvfs recovery key 1".utf8),
                               info: Array(purpose.utf8), outputByteCount: 32).withUnsafeBytes { Data($0) }
    }

    /// The keys it derives, as a device's.
    var keys: DeviceKeys {
        // Any 32 bytes are a valid seed for both curves.
        DeviceKeys(signing: try! Curve25519.Signing.PrivateKey(rawRepresentation: derived("signing")),
                   agreement: try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: derived("agreement")))
    }

    /// Its id in the roster: derived from its signing key, so that the key alone finds its member entry.
    var id: DeviceID {
        DeviceID(bytes: Array(SHA256.hash(data: Array("kvfs recovery id".utf8) + keys.signingPublicKey).prefix(16)))
    }
}
