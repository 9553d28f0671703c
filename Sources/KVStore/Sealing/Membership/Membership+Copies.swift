import Foundation

/// A copied state directory in a sealed store (docs/sealed.md § A copied state directory): a copy
/// (`cp -a ~/.local/state/kvfs`, a cloned home folder) holds the original member's `device.key` and
/// pin. Opening the store, it proves to be a copy (``WriterClaim``) and takes a new device id, which
/// no roster names: it is refused, saying whose copy it is. Pairing it makes it a member with keys of
/// its own, so that two machines never sign as one member.
extension Membership {
    /// Why this device (`device`), opening the sealed store, is refused: a copy of a member's state
    /// directory (it proved to be one of `copyOf`'s, or it holds a member's keys under another id), or no member.
    func refusal(device: DeviceID, copyOf: DeviceID?) -> KVStoreError {
        guard let original = copiedMember(device: device, copyOf: copyOf) else { return .notMember(path: syncPath) }
        return .copiedStateDirectory(state: statePath, original: "\(original.name) (\(original.id.hex))", path: syncPath)
    }

    /// The member of the version this device trusts whose state directory this one is a copy of: the one
    /// with id `copyOf`, or one whose signing key this state directory holds under another id than `device`.
    func copiedMember(device: DeviceID, copyOf: DeviceID?, in version: RosterVersion? = nil) -> RosterMember? {
        guard let version = version ?? ((try? pinned()) ?? nil) else { return nil }
        let key = (try? deviceKeys())?.signingPublicKey
        return version.deviceMembers.first { $0.id == copyOf || ($0.id != device && $0.signingKey == key) }
    }

    /// Who this device joins as (`kvfs join`, with a code or the recovery key): its id and its keys, made
    /// when it has none. A copy of a member's state directory joins as a new device: it takes a new id
    /// when its device's folder is claimed by another state directory, as the store does as it opens, and
    /// new keys when the ones it holds are a member's under another id (`head`, or the version it pinned):
    /// the original keeps its keys, and its signatures stay its own.
    func joiningIdentity(head: RosterVersion? = nil) throws(MembershipError) -> (device: DeviceID, keys: DeviceKeys) {
        let folder = try stateFolder(create: true)
        let state: StateDirectory
        do { state = try StateDirectory(path: statePath) } catch { throw MembershipError(error) }
        var device = try deviceID()
        // A member's claim is a signed file: a copy holds the member's keys, and opens it with them.
        let sealing = ((try? keys(device: device)) ?? nil).map { StoreSealing($0) }
        let sync = SyncDirectory(path: syncPath).sealed(by: sealing)
        let copyOf = DeviceStore.copiedClaim(of: device, state: state, sync: sync) != nil ? device : nil
        if copyOf != nil {
            do { device = try state.newDeviceID() } catch { throw MembershipError(error) }
        }
        let holdsAMembersKeys = [head, (try? pinned()) ?? nil].compactMap { $0 }.contains { copiedMember(device: device, copyOf: nil, in: $0) != nil }
        if copyOf != nil || holdsAMembersKeys {
            let keys = DeviceKeys()
            do { try folder.writeAtomically(DeviceKeys.fileName, keys.bytes) } catch { throw MembershipError(error) }
            return (device, keys)
        }
        return (device, try DeviceKeys.loadOrCreate(in: folder))
    }
}
