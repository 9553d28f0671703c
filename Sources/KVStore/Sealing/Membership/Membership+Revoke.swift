import Crypto
import Foundation

extension Membership {
    /// Removes `device` (its id, 4 or more first characters of it, or its name)
    /// from the roster and moves the store to a new epoch: a fresh store key
    /// wrapped for the members left and the recovery key, the earlier keys
    /// sealed under it. The revoked device keeps the keys it had, and so what
    /// it could read; its later records are refused (it is no member). Returns
    /// its name and id, and the new epoch.
    ///
    /// While the roster has a fork (versions of one number that each remove another's signer), a member
    /// that every version of the fork keeps settles it so: the new version follows the fork's version that
    /// removes `device` too.
    public func revoke(_ device: String) throws(MembershipError) -> (name: String, id: String, epoch: UInt32) {
        var (head, me, keys, fork) = try asMemberNotingFork()
        let target = try Self.resolve(device, in: head)
        guard target.id != me.id else { throw MembershipError("this device cannot revoke itself: run kvfs retire --revoke on another member") }
        if let fork {
            guard let branch = fork.versions.first(where: { $0.member(target.id) == nil }), fork.canBeSettled(by: me.id, after: branch),
                  let kept = branch.member(me.id) else {
                throw MembershipError("\(fork); this device cannot settle it by revoking \(target.name)")
            }
            (head, me) = (branch, kept)
        }
        let (current, earlier) = try Self.storeKeys(of: head, member: me, agreement: keys.agreement)
        let version = try write(after: head, members: head.members.filter { $0.id != target.id },
                                newEpoch: (SymmetricKey(size: .bits256), earlier + [current]), signer: me.id, signingKey: keys.signing)
        return (target.name, target.id.hex, version.epoch)
    }

    /// The device member `text` names: its id, a unique prefix of it (4 characters or more), or its unique name.
    static func resolve(_ text: String, in version: RosterVersion) throws(MembershipError) -> RosterMember {
        let devices = version.deviceMembers
        if let exact = devices.first(where: { $0.id.hex == text.lowercased() }) { return exact }
        let byPrefix = text.count >= 4 ? devices.filter { $0.id.hex.hasPrefix(text.lowercased()) } : []
        let byName = devices.filter { $0.name == text }
        switch (byPrefix.count, byName.count) {
        case (1, 0): return byPrefix[0]
        case (0, 1): return byName[0]
        case (0, 0): throw MembershipError("no member of the sealed store is \(text) (kvfs devices lists the devices)")
        default: throw MembershipError("more than one member is \(text): give its id")
        }
    }
}
