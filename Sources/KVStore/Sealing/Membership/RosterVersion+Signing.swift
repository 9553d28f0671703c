import Crypto
import Foundation

/// What needs cryptography in a roster version: its hash, its signature, and whether it may follow another.
extension RosterVersion {
    private static let signingContext = Array("kvfs roster 1".utf8)

    /// SHA-256 of the whole version: what the next version names as its previous, and the pairing accept names.
    var hash: [UInt8] { Array(SHA256.hash(data: bytes)) }

    /// A version signed by `signingKey`, the key of `signer`.
    static func signed(storeID: String, number: UInt64, previous: [UInt8], epoch: UInt32, members: [RosterMember],
                       earlier: [UInt8], signer: DeviceID, signingKey: Curve25519.Signing.PrivateKey) throws(MembershipError) -> RosterVersion {
        let body = unsigned(storeID: storeID, number: number, previous: previous, epoch: epoch, members: members,
                            earlier: earlier, signer: signer)
        let signature: [UInt8]
        do { signature = Array(try signingKey.signature(for: signingContext + body)) } catch {
            throw MembershipError("cannot sign the roster: \(error)")
        }
        guard let version = decode(body + signature) else { throw MembershipError("the roster version made here does not decode (a name or the store id too long?)") }
        return version
    }

    /// Whether `signer`'s signature checks against `member`'s key.
    func isSigned(by member: RosterMember) -> Bool {
        guard member.id == signer, let key = member.verifyingKey else { return false }
        return key.isValidSignature(signature, for: Self.signingContext + bytes.dropLast(64))
    }

    /// Why this version may not come after `previous`, or nil when it may: the
    /// same store, the next number, the previous version's hash, the same epoch
    /// or the next, signed by a member of `previous`, and the recovery key as
    /// it was unless the recovery key itself signs (only it changes itself).
    func refusal(after previous: RosterVersion) -> String? {
        if storeID != previous.storeID { return "it is another store's" }
        if number != previous.number + 1 { return "it is not version \(previous.number + 1)" }
        if self.previous != previous.hash { return "it does not follow version \(previous.number) (another chain, or altered)" }
        if epoch != previous.epoch && epoch != previous.epoch + 1 { return "its epoch \(epoch) does not follow \(previous.epoch)" }
        guard let signerMember = previous.member(signer) else { return "its signer \(signer) is not a member" }
        if !isSigned(by: signerMember) { return "its signature does not check" }
        let (recovery, before) = (recoveryMember, previous.recoveryMember)
        if (recovery?.id, recovery?.signingKey, recovery?.agreementKey) != (before?.id, before?.signingKey, before?.agreementKey),
           signer != before?.id {
            return "it changes the recovery key, which only the recovery key may"
        }
        return nil
    }
}

extension RosterMember {
    /// Its signing key as CryptoKit's type.
    var verifyingKey: Curve25519.Signing.PublicKey? { try? Curve25519.Signing.PublicKey(rawRepresentation: signingKey) }
}
