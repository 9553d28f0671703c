import Crypto
import Foundation

/// What sealing a store did (`kvfs seal`, docs/sealed.md § Converting a store).
public struct SealedStore: Sendable {
    /// The store's recovery key, given back this once.
    public let recoveryKey: RecoveryKey
    /// The other devices whose values and removals that still count, and history, this device now keeps
    /// in its folder, sealed as it next opens the store: each one's plain folder removed, or left
    /// (``RetiredDevice/folderLeft`` says why) for the device to seal once it has joined.
    public let adopted: [RetiredDevice]
}

extension Membership {
    /// Seals the store: this device adopts the other devices' records, as
    /// `kvfs retire` does (``DeviceStore``'s `adoptEveryDeviceForSealing`), then
    /// the roster's genesis is written, this device and the recovery key its
    /// members, under a fresh store key (epoch 1), signed by the recovery key,
    /// and pinned. Returns the recovery key, which is nowhere else (the caller
    /// prints it once: `kvfs seal`), and the devices adopted.
    ///
    /// The records are sealed by the journal from then on, with the keys this
    /// makes: this device's plain ones, which now hold every value of the store,
    /// by a compaction as it next opens the store (`kvfs seal` opens it at
    /// once). A device that looks alive, or whose folder has not fully arrived,
    /// is refused unless `force` (then its folder is left, for it to seal once it
    /// has joined). Refused when the store already has a roster.
    public func seal(deviceName: String, force: Bool = false) throws(MembershipError) -> SealedStore {
        guard !Self.isSealed(syncDirectory: URL(fileURLWithPath: syncPath)) else {
            throw MembershipError("the store at \(syncPath) is sealed already")
        }
        let adopted: [RetiredDevice]
        do throws(KVStoreError) {
            let store = try DeviceStore(syncDirectory: URL(fileURLWithPath: syncPath), stateDirectory: URL(fileURLWithPath: statePath))
            defer { store.close() }
            adopted = try store.adoptEveryDeviceForSealing(force: force)
        } catch {
            if case let .retireRefused(device, reason) = error { throw MembershipError("cannot seal the store yet: \(device): \(reason)") }
            throw MembershipError(error)
        }
        return SealedStore(recoveryKey: try writeGenesis(deviceName: deviceName), adopted: adopted)
    }

    /// Writes and pins the roster's genesis; returns the recovery key it registers.
    private func writeGenesis(deviceName: String) throws(MembershipError) -> RecoveryKey {
        let storeID = try storeID()
        let device = try deviceID()
        let keys = try DeviceKeys.loadOrCreate(in: stateFolder(create: true))
        let recovery = RecoveryKey.random()
        let recoveryKeys = recovery.keys
        let storeKey = SymmetricKey(size: .bits256)
        let members = [
            try Self.member(.device, id: device, name: deviceName, signingKey: keys.signingPublicKey,
                            agreementKey: keys.agreementPublicKey, key: storeKey, epoch: 1, storeID: storeID),
            try Self.member(.recovery, id: recovery.id, name: "recovery key", signingKey: recoveryKeys.signingPublicKey,
                            agreementKey: recoveryKeys.agreementPublicKey, key: storeKey, epoch: 1, storeID: storeID),
        ]
        let genesis = try RosterVersion.signed(storeID: storeID, number: 1, previous: [UInt8](repeating: 0, count: 32), epoch: 1,
                                               members: members, earlier: [], signer: recovery.id, signingKey: recoveryKeys.signing)
        try RosterFolder.write(genesis, syncPath: syncPath)
        try pin(genesis)
        return recovery
    }

    /// Joins this device to the store with its recovery key, when no member is
    /// left to pair it: the roster is followed from its genesis (signed by the
    /// store's first recovery key, which a rotation may since have replaced), the
    /// store keys are unwrapped with the recovery key the roster's head names,
    /// and a version adding this device is written, signed by that key.
    /// Returns the roster version's number.
    @discardableResult
    public func recover(with recovery: RecoveryKey, deviceName: String) throws(MembershipError) -> UInt64 {
        let storeID = try storeID()
        let recoveryKeys = recovery.keys
        let roster = try RosterFolder(syncPath: syncPath)
        let geneses = (roster.names()[1] ?? []).compactMap { try? roster.version(named: $0).get() }.filter { version in
            version.storeID == storeID && version.signer == version.recoveryMember?.id
                && version.recoveryMember.map(version.isSigned(by:)) == true
        }
        guard !geneses.isEmpty else {
            throw MembershipError("the store at \(syncPath) has no roster a recovery key sealed: check that roster/ has arrived")
        }
        let heads = geneses.map { roster.head(after: $0).head }
        guard let head = heads.first(where: { $0.recoveryMember?.id == recovery.id }) else {
            let sealedIt = geneses.contains { $0.recoveryMember?.id == recovery.id }
            throw MembershipError(sealedIt ? "roster version \(heads.map(\.number).max() ?? 1) no longer has this recovery key (it was rotated: kvfs recovery-key --rotate)"
                                       : "the store at \(syncPath) has no roster this recovery key sealed: check the words, and that roster/ has arrived")
        }
        guard let member = head.member(recovery.id), member.role == .recovery, member.signingKey == recoveryKeys.signingPublicKey else {
            throw MembershipError("roster version \(head.number) no longer has this recovery key")
        }
        let (current, _) = try Self.storeKeys(of: head, member: member, agreement: recoveryKeys.agreement)
        let (device, keys) = try joiningIdentity(head: head)
        let joined = try Self.member(.device, id: device, name: deviceName, signingKey: keys.signingPublicKey,
                                     agreementKey: keys.agreementPublicKey, key: current, epoch: head.epoch, storeID: storeID)
        let members = head.members.filter { $0.id != device } + [joined]
        return try write(after: head, members: members, newEpoch: nil, signer: recovery.id, signingKey: recoveryKeys.signing).number
    }
}
