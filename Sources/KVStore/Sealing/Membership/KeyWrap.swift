import Crypto
import Foundation

/// A store key sealed for one recipient, as age wraps a file key: a fresh
/// X25519 key pair per wrap, its shared secret with the recipient's agreement
/// key through HKDF-SHA256 (salt: both public keys; info: the store, the epoch
/// and the member's id), and ChaChaPoly over the 32-byte key.
///
/// Its 92 bytes: the ephemeral public key (32), then ChaChaPoly's combined
/// box: nonce (12), the sealed key (32), tag (16) (docs/sealed.md § Roster).
enum KeyWrap {
    static let size = RosterVersion.Limits.wrapBytes

    /// `key` wrapped for the holder of `recipient`'s private key, bound to `context`.
    static func wrap(_ key: SymmetricKey, for recipient: [UInt8], context: WrapContext) throws(MembershipError) -> [UInt8] {
        do {
            let ephemeral = Curve25519.KeyAgreement.PrivateKey()
            let publicKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: recipient)
            let wrapping = try wrappingKey(ephemeral.sharedSecretFromKeyAgreement(with: publicKey),
                                           ephemeral: Array(ephemeral.publicKey.rawRepresentation), recipient: recipient,
                                           context: context)
            let box = try ChaChaPoly.seal(key.withUnsafeBytes { Data($0) }, using: wrapping)
            return Array(ephemeral.publicKey.rawRepresentation) + Array(box.combined)
        } catch {
            throw MembershipError("cannot wrap the store key: \(error)")
        }
    }

    /// The key `wrapped` holds for `recipient`, or nil when it is not a wrap for it in `context`
    /// (altered, for another member, store or epoch).
    static func unwrap(_ wrapped: [UInt8], with recipient: Curve25519.KeyAgreement.PrivateKey, context: WrapContext) -> SymmetricKey? {
        guard wrapped.count == size,
              let ephemeral = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: wrapped[0..<32]),
              let shared = try? recipient.sharedSecretFromKeyAgreement(with: ephemeral),
              let box = try? ChaChaPoly.SealedBox(combined: wrapped[32...]) else { return nil }
        let wrapping = wrappingKey(shared, ephemeral: Array(wrapped[0..<32]),
                                   recipient: Array(recipient.publicKey.rawRepresentation), context: context)
        guard let key = try? ChaChaPoly.open(box, using: wrapping), key.count == 32 else { return nil }
        return SymmetricKey(data: key)
    }

    private static func wrappingKey(_ shared: SharedSecret, ephemeral: [UInt8], recipient: [UInt8], context: WrapContext) -> SymmetricKey {
        shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: ephemeral + recipient,
                                       sharedInfo: context.info, outputByteCount: 32)
    }

    /// The store keys of epochs 1 to `keys.count`, in order, sealed under `current`
    /// (the newest epoch's key), bound to the store: a roster version's `earlier` field.
    static func sealEarlier(_ keys: [SymmetricKey], under current: SymmetricKey, storeID: String) throws(MembershipError) -> [UInt8] {
        guard !keys.isEmpty else { return [] }
        do {
            let plain = keys.flatMap { $0.withUnsafeBytes { Array($0) } }
            return Array(try ChaChaPoly.seal(plain, using: current, authenticating: Array("kvfs earlier keys 1 \(storeID)".utf8)).combined)
        } catch {
            throw MembershipError("cannot seal the earlier epochs' keys: \(error)")
        }
    }

    /// The keys of epochs 1 to `count` that `sealed` holds under `current`, or nil when it does not open.
    static func openEarlier(_ sealed: [UInt8], count: Int, under current: SymmetricKey, storeID: String) -> [SymmetricKey]? {
        guard count > 0 else { return sealed.isEmpty ? [] : nil }
        guard sealed.count == 12 + 32 * count + 16, let box = try? ChaChaPoly.SealedBox(combined: sealed),
              let plain = try? ChaChaPoly.open(box, using: current, authenticating: Array("kvfs earlier keys 1 \(storeID)".utf8))
        else { return nil }
        let bytes = Array(plain)
        return (0..<count).map { SymmetricKey(data: bytes[$0 * 32..<$0 * 32 + 32]) }
    }
}

/// What a key wrap is bound to: a wrap taken from another store, epoch or
/// member does not open.
struct WrapContext {
    let storeID: String
    let epoch: UInt32
    let member: DeviceID

    var info: [UInt8] {
        var writer = ByteWriter()
        writer.raw(Array("kvfs key wrap 1".utf8))
        writer.string(storeID)
        writer.u32(epoch)
        writer.raw(member.bytes)
        return writer.bytes
    }
}
