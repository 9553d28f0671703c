import Foundation

/// Who this device is: its id and its name, settled when the store opens.
extension DeviceStore {
    /// Who this device is as the store opens: its id, the device whose state directory this one proved to
    /// be a copy of, and what the log says of it once the store has opened.
    struct OwnIdentity {
        var id: DeviceID
        /// The device whose folder is claimed by another state directory than this one, which is a copy of it.
        var copyOf: DeviceID?
        /// One line for the log: a new id taken, and why.
        var note: String?
    }

    /// This device's id, from the state directory; a new one when the state
    /// directory proves to be a copy of the one that writes that id's folder
    /// (``WriterClaim``): two processes must never write as one device; and a
    /// new one when another device retired this one (`kvfs retire`): every
    /// reader ignores a retired device's records and nobody keeps removals
    /// for it, so the machine, mounted again, joins as a new device. Not so
    /// for a member of a sealed store that the roster it trusts names: only
    /// the roster says who writes there (`kvfs retire --revoke` removes a
    /// member), and a new id would be no member. That is how the devices
    /// `kvfs seal` adopted join under their own ids (docs/sealed.md § Converting a store).
    ///
    /// Read-only, a copy keeps the id it copied (it writes nothing, so it is no second writer), and says
    /// whose copy it is: in a sealed store it is refused all the same (docs/sealed.md § A copied state directory).
    static func ownIdentity(state: StateDirectory, sync: SyncDirectory) throws(KVStoreError) -> OwnIdentity {
        let id = try state.deviceID()
        if sync.isWritable, let retirement = sync.retirement(of: id), !Self.isPinnedMember(id, state: state, sync: sync) {
            let newID = try state.newDeviceID()
            return OwnIdentity(id: newID, note: "this device (\(retirement.name.map { "\($0), " } ?? "")\(id.hex)) was retired by \(sync.name(of: retirement.by) ?? retirement.by.hex) (kvfs retire); \(state.path) joins the store again as a new device, \(newID.hex)")
        }
        guard let holder = copiedClaim(of: id, state: state, sync: sync) else { return OwnIdentity(id: id) }
        guard sync.isWritable else { return OwnIdentity(id: id, copyOf: id) }
        let newID = try state.newDeviceID()
        return OwnIdentity(id: newID, copyOf: id, note: "\(state.path) is a copy of the state directory that writes device \(id.hex) (\(holder.description)); two processes must not write as one device, so this one is now device \(newID.hex)")
    }

    /// The claim of `id`'s folder when another state directory than `state` made it (``WriterClaim``):
    /// `state` is then a copy of that one.
    static func copiedClaim(of id: DeviceID, state: StateDirectory, sync: SyncDirectory) -> WriterClaim.Holder? {
        let deviceFolder = sync.folder(of: id)
        guard let folder = (try? deviceFolder.open()) ?? nil else { return nil }
        return WriterClaim.holder(in: folder, of: deviceFolder, fromAnotherThan: state.inode)
    }

    /// Whether the roster version this device trusts (`roster.pin`) names `id` as a member.
    private static func isPinnedMember(_ id: DeviceID, state: StateDirectory, sync: SyncDirectory) -> Bool {
        let membership = Membership(syncDirectory: URL(fileURLWithPath: sync.path), stateDirectory: URL(fileURLWithPath: state.path))
        return ((try? membership.pinned()) ?? nil)?.deviceMembers.contains { $0.id == id } ?? false
    }

    /// The name this device goes by: the one given (which must pass
    /// ``DeviceName/validate(_:)``), else the one its folder already has,
    /// else, in a sealed store, the one its roster gives it (the name given to
    /// `kvfs seal`, `pair` or `join`), else the host name (a new device).
    /// `device.json` is written only when that changes it: opening a store renames nothing.
    static func settleName(_ given: String?, of device: DeviceID, in sync: SyncDirectory) throws(KVStoreError) -> String {
        let recorded = sync.name(of: device)
        let name = try given.map(DeviceName.validate) ?? recorded ?? sync.rosterName(of: device)
            ?? String(ProcessInfo.processInfo.hostName.prefix(DeviceName.maximumLength))
        if name != recorded && sync.isWritable { try sync.setName(name, of: device) }
        return name
    }
}
