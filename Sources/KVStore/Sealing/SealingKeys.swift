import Crypto

/// What one device of a sealed store needs to seal its records and to open and check the others':
/// the store's keys, its own signing key, and the members' verifying keys
/// (docs/sealed.md, the threat model: docs/threat-model.md).
///
/// The membership (`Sources/KVStore/Sealing/Membership/`) makes it from the roster in the sync
/// directory and the device's keys in its state directory; the journal
/// (`Sources/KVStore/Sealing/Records/`) uses it and knows nothing of rosters. A value of it is one
/// roster version's view: the engine takes a new one when the roster changes.
struct SealingKeys: Sendable {
    /// The store's id (`store-id`): bound into every seal and signature, so nothing moves between stores.
    let storeID: String
    /// The epoch new records are sealed under: the roster's, raised by each revocation.
    let currentEpoch: UInt32
    /// The store key of each epoch this device can open: its current one and every earlier one.
    let storeKeys: [UInt32: SymmetricKey]
    /// This device's id: the folder its records are written to.
    let device: DeviceID
    /// This device's signing key (its state directory's, never in the sync directory).
    let signingKey: Curve25519.Signing.PrivateKey
    /// The verifying key of each member device; a device not here is not a member, and its records are refused.
    let members: [DeviceID: Curve25519.Signing.PublicKey]
    /// The name the roster gives each member device (signed with it: docs/sealed.md § Roster).
    let memberNames: [DeviceID: String]
    /// The number of the roster version these keys are of (0: keys made without a roster, in tests).
    let rosterVersion: UInt64
    /// Whether that version names a recovery key.
    let hasRecoveryKey: Bool
    /// The names of the devices revoked since each earlier epoch that hold its key: what a record sealed
    /// under that epoch is open to (``EngineState/supersededKeyWarnings``).
    let revokedReaders: [UInt32: [String]]
    /// `K_own`, derived from the signing key: the key of the nonces of this device's records, which only
    /// the device (each of its processes) can make, and so recognise as its own before they are signed
    /// (docs/format.md § Sealed frames).
    let ownNonceKey: SymmetricKey
    /// HMAC-SHA256 keyed with ``ownNonceKey``: the key's pads are hashed once, not once a record.
    let ownNonceMAC: NonceMAC

    init(storeID: String, currentEpoch: UInt32, storeKeys: [UInt32: SymmetricKey], device: DeviceID,
         signingKey: Curve25519.Signing.PrivateKey, members: [DeviceID: Curve25519.Signing.PublicKey],
         memberNames: [DeviceID: String] = [:], rosterVersion: UInt64 = 0, hasRecoveryKey: Bool = false,
         revokedReaders: [UInt32: [String]] = [:]) {
        self.memberNames = memberNames
        self.revokedReaders = revokedReaders
        self.rosterVersion = rosterVersion
        self.hasRecoveryKey = hasRecoveryKey
        self.storeID = storeID
        self.currentEpoch = currentEpoch
        self.storeKeys = storeKeys
        self.device = device
        self.signingKey = signingKey
        self.members = members
        ownNonceKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: signingKey.rawRepresentation),
                                             info: Array("kvfs own-record nonce 1".utf8), outputByteCount: 32)
        ownNonceMAC = NonceMAC(key: ownNonceKey)
    }

    /// The key of `epoch`, or nil when this device never had it (a record from before it joined a
    /// later epoch, or from an epoch that does not exist).
    func storeKey(epoch: UInt32) -> SymmetricKey? { storeKeys[epoch] }

    /// The verifying key of `device`, or nil when it is not a member.
    func verifyingKey(of device: DeviceID) -> Curve25519.Signing.PublicKey? { members[device] }
}
