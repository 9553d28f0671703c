import Crypto

/// A device's own keys in a sealed store: an Ed25519 key that signs its
/// records and roster versions, and an X25519 key for which the store key is
/// wrapped. Kept in the state directory as `device.key` (0600, never in the
/// sync directory; docs/sealed.md § Device keys).
struct DeviceKeys: Sendable {
    let signing: Curve25519.Signing.PrivateKey
    let agreement: Curve25519.KeyAgreement.PrivateKey

    /// The file's name in the state directory.
    static let fileName = "device.key"
    /// `device.key`'s bytes: this mark, a format byte (1), the 32-byte signing
    /// seed, the 32-byte agreement key: 73 bytes.
    private static let mark = Array("KVDEVKEY".utf8)
    private static let size = 8 + 1 + 32 + 32

    /// Fresh random keys.
    init() {
        signing = Curve25519.Signing.PrivateKey()
        agreement = Curve25519.KeyAgreement.PrivateKey()
    }

    init(signing: Curve25519.Signing.PrivateKey, agreement: Curve25519.KeyAgreement.PrivateKey) {
        (self.signing, self.agreement) = (signing, agreement)
    }

    /// The keys `bytes` hold, or nil when they are not a `device.key` of this format.
    init?(bytes: [UInt8]) {
        guard bytes.count == Self.size, bytes.starts(with: Self.mark), bytes[8] == 1,
              let signing = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes[9..<41]),
              let agreement = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes[41..<73]) else { return nil }
        self.init(signing: signing, agreement: agreement)
    }

    var bytes: [UInt8] { Self.mark + [1] + signing.rawRepresentation + agreement.rawRepresentation }

    var signingPublicKey: [UInt8] { Array(signing.publicKey.rawRepresentation) }
    var agreementPublicKey: [UInt8] { Array(agreement.publicKey.rawRepresentation) }

    /// The device's keys in `state`, or nil when it has none (it has never sealed, paired or joined a store).
    /// A file that is there but not a key file is an error: the device's identity in a sealed store is at stake.
    static func load(from state: Folder) throws(MembershipError) -> DeviceKeys? {
        let bytes: [UInt8]?
        do { bytes = try state.read(fileName, limit: size + 1) } catch { throw MembershipError(error) }
        guard let bytes else { return nil }
        guard let keys = DeviceKeys(bytes: bytes) else {
            throw MembershipError("\(state.path)/\(fileName) is not a kvfs device key; move it away only if this device is no member of a sealed store")
        }
        return keys
    }

    /// The device's keys in `state`, made and written (0600) when it has none.
    static func loadOrCreate(in state: Folder) throws(MembershipError) -> DeviceKeys {
        if let keys = try load(from: state) { return keys }
        let keys = DeviceKeys()
        do { try state.writeAtomically(fileName, keys.bytes) } catch { throw MembershipError(error) }
        return keys
    }
}
