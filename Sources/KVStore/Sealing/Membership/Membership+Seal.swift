import Crypto
import Foundation

extension Membership {
    /// Seals the store's roster: writes its genesis, this device and the
    /// recovery key its members, under a fresh store key (epoch 1), signed by the
    /// recovery key, and pins it. Returns the recovery key, which is nowhere
    /// else: the caller prints it once (`kvfs seal`).
    ///
    /// Refused when the store already has a roster, and when a device folder
    /// holds records: they would stay readable beside the sealed ones (a store
    /// with values moves to a new sealed store by export and import). The
    /// records are sealed by the journal from then on, with the keys this makes.
    public func seal(deviceName: String) throws(MembershipError) -> RecoveryKey {
        guard !Self.isSealed(syncDirectory: URL(fileURLWithPath: syncPath)) else {
            throw MembershipError("the store at \(syncPath) is sealed already")
        }
        guard !SyncDirectory(path: syncPath).holdsRecords() else {
            throw MembershipError("""
                the store at \(syncPath) holds values already, which sealing would leave readable in its folders: \
                seal a new store and move the values over (kvfs export here; kvfs seal and kvfs import on the new one)
                """)
        }
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
    /// left to pair it: the roster is followed from the genesis the recovery
    /// key signed, the store keys are unwrapped with the recovery key, and a
    /// version adding this device is written, signed by the recovery key.
    /// Returns the roster version's number.
    @discardableResult
    public func recover(with recovery: RecoveryKey, deviceName: String) throws(MembershipError) -> UInt64 {
        let storeID = try storeID()
        let recoveryKeys = recovery.keys
        let roster = try RosterFolder(syncPath: syncPath)
        let geneses = (roster.names()[1] ?? []).compactMap { try? roster.version(named: $0).get() }.filter { version in
            version.storeID == storeID && version.signer == recovery.id
                && version.recoveryMember?.signingKey == recoveryKeys.signingPublicKey
                && version.recoveryMember.map(version.isSigned(by:)) == true
        }
        guard let genesis = geneses.min(by: { $0.hash.lexicographicallyPrecedes($1.hash) }) else {
            throw MembershipError("the store at \(syncPath) has no roster this recovery key sealed: check the words, and that roster/ has arrived")
        }
        let head = roster.head(after: genesis).head
        guard let member = head.member(recovery.id), member.role == .recovery, member.signingKey == recoveryKeys.signingPublicKey else {
            throw MembershipError("roster version \(head.number) no longer has this recovery key")
        }
        let (current, _) = try Self.storeKeys(of: head, member: member, agreement: recoveryKeys.agreement)
        let device = try deviceID()
        let keys = try DeviceKeys.loadOrCreate(in: stateFolder(create: true))
        let joined = try Self.member(.device, id: device, name: deviceName, signingKey: keys.signingPublicKey,
                                     agreementKey: keys.agreementPublicKey, key: current, epoch: head.epoch, storeID: storeID)
        let members = head.members.filter { $0.id != device } + [joined]
        return try write(after: head, members: members, newEpoch: nil, signer: recovery.id, signingKey: recoveryKeys.signing).number
    }
}
