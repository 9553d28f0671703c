import Crypto
import Foundation

/// A one-time pairing code: 16 random bytes (128 bits), shown as 16 words
/// on the member and typed on the new machine. From it come the name of the
/// pairing's files in the sync directory and the key that MACs both messages,
/// so only who holds the code can write a message the other side accepts
/// (docs/sealed.md § Pairing).
public struct PairingCode: Sendable {
    let secret: [UInt8]

    /// The words to show.
    public var words: String { WordCode.words(for: secret) }

    static func random() -> PairingCode { PairingCode(secret: SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }) }

    init(secret: [UInt8]) { self.secret = secret }

    /// The code `words` spell (16 of ``WordCode``'s words).
    public init(words: String) throws(MembershipError) { secret = try WordCode.bytes(from: words, count: 16) }

    private func derived(_ purpose: String, bytes: Int) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), salt: Array("kvfs pairing 1".utf8),
                               info: Array(purpose.utf8), outputByteCount: bytes)
    }

    /// The pairing's name in `pairing/`: 16 hex digits, which tell nothing of the code.
    var name: String { derived("name", bytes: 8).withUnsafeBytes { $0.map { String($0, radix: 16).leftPadded2 }.joined() } }

    /// The key both messages are MACed with.
    var macKey: SymmetricKey { derived("mac", bytes: 32) }
}

extension PairingRequest {
    /// Its bytes, MACed with `code`.
    func encoded(code: PairingCode) -> [UInt8] { code.sealed(unsigned) }

    /// The request `bytes` hold, or nil when they are not one well-formed request whose MAC checks with `code`.
    static func decode(_ bytes: [UInt8], code: PairingCode) -> PairingRequest? {
        guard let request = parse(bytes), (try? Curve25519.Signing.PublicKey(rawRepresentation: request.signingKey)) != nil,
              code.checks(bytes) else { return nil }
        return request
    }
}

extension PairingAccept {
    /// Its bytes, MACed with `code`.
    func encoded(code: PairingCode) -> [UInt8] { code.sealed(unsigned) }

    /// The accept `bytes` hold, or nil when they are not one well-formed accept whose MAC checks with `code`.
    static func decode(_ bytes: [UInt8], code: PairingCode) -> PairingAccept? {
        guard let accept = parse(bytes), code.checks(bytes) else { return nil }
        return accept
    }
}

extension PairingCode {
    /// `bytes` followed by their HMAC-SHA256 under the code's MAC key.
    func sealed(_ bytes: [UInt8]) -> [UInt8] {
        bytes + Array(HMAC<SHA256>.authenticationCode(for: bytes, using: macKey))
    }

    /// Whether the last 32 bytes of `bytes` are the MAC of the others under the code's MAC key.
    func checks(_ bytes: [UInt8]) -> Bool {
        bytes.count > 32 && HMAC<SHA256>.isValidAuthenticationCode(bytes.suffix(32), authenticating: bytes.dropLast(32), using: macKey)
    }
}

extension String {
    /// A one- or two-digit hex byte as two digits.
    fileprivate var leftPadded2: String { count == 1 ? "0" + self : self }
}
