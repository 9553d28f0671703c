import Crypto
import Foundation

extension Membership {
    /// Replaces the store's recovery key (`kvfs recovery-key --rotate`): on a member, with the current recovery
    /// key, which alone may change it (docs/sealed.md § Recovery key). The new roster version, signed by the
    /// current recovery key, names the new one in its place and moves the store to a new epoch whose key is
    /// wrapped for the device members and the new recovery key only: the old recovery key opens nothing
    /// written after the rotation, and joins no machine any more. Returns the new recovery key, which is
    /// nowhere else (the caller prints it once), and the new epoch.
    public func rotateRecoveryKey(current: RecoveryKey) throws(MembershipError) -> (recoveryKey: RecoveryKey, epoch: UInt32) {
        let (head, me, keys) = try asMember()
        let currentKeys = current.keys
        guard let recovery = head.recoveryMember, recovery.id == current.id, recovery.signingKey == currentKeys.signingPublicKey else {
            throw MembershipError("those words are not the store's recovery key (roster version \(head.number)): only the recovery key in force can be rotated")
        }
        let (storeKey, earlier) = try Self.storeKeys(of: head, member: me, agreement: keys.agreement)
        let next = RecoveryKey.random()
        let nextKeys = next.keys
        let nextMember = RosterMember(role: .recovery, id: next.id, name: recovery.name, signingKey: nextKeys.signingPublicKey,
                                      agreementKey: nextKeys.agreementPublicKey, wrappedKey: recovery.wrappedKey)
        let version = try write(after: head, members: head.deviceMembers + [nextMember], newEpoch: (SymmetricKey(size: .bits256), earlier + [storeKey]),
                                signer: current.id, signingKey: currentKeys.signing)
        return (next, version.epoch)
    }
}
