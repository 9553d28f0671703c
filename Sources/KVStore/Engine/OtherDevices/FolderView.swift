import Foundation

/// What this device knows of the device folders of the sync directory: a
/// reader per folder it reads, the records it holds back, what the folders
/// say they adopted of each other and which of those adoptions are in force,
/// the devices it read whose folders are not here now, and their names.
///
/// One of ``EngineState``'s two parts, beside this device's own journal
/// (``OwnFolder``); it lives inside the engine's `Mutex`.
struct FolderView {
    /// A reader per other device's folder that is read (this device's own is its journal's, ``OwnFolder/State/reader``).
    var readers: [DeviceID: DeviceFolderReader] = [:]
    /// Other devices' records stamped too far ahead of this device's clock, for later.
    var heldBack = HeldBackRecords()
    /// Per device folder, what it says it adopted (``Adoption``), this device's own included.
    var adoptions: [DeviceID: [DeviceID: Adoption]] = [:]
    /// Per adopted device, the stamp up to which its own folder's records are ignored: the adoptions in force here.
    var adoptedUpTo: [DeviceID: HLCTimestamp] = [:]
    /// Devices this device has read whose folders are not here now (vanished,
    /// or not arrived yet after a restart), with how far it had read them:
    /// they stay in its progress, and hold tombstones back, until retired.
    var remembered: [DeviceID: HLCTimestamp] = [:]
    /// The names devices gave themselves (their `device.json`, as last
    /// read), remembered should their folders go.
    private(set) var names: [DeviceID: String] = [:]
    /// Changes whenever a device's name does: what shows names (history's
    /// file names) is made again then.
    private(set) var namesRevision: UInt64 = 0
    /// The sync directory's store id; empty until it arrives.
    var storeID: String
    /// When other devices' records were last read.
    var lastSyncTime: Date?

    /// Takes `name` as `device`'s name from now on.
    mutating func rename(_ device: DeviceID, to name: String) {
        guard names[device] != name else { return }
        names[device] = name
        namesRevision &+= 1
    }

    /// How far this device has read and merged `device`'s records without a
    /// gap: its reader's ``DeviceFolderReader/contiguous``, short of the first
    /// record held back.
    func mergedUpTo(_ device: DeviceID) -> HLCTimestamp? {
        guard let read = readers[device]?.contiguous else { return nil }
        guard let held = heldBack.earliest(of: device) else { return read }
        return min(read, HLCTimestamp(rawValue: held.rawValue - 1))
    }

    /// Whether some folder of `adoptions` says it retired `device`.
    static func saysRetired(_ device: DeviceID, in adoptions: [DeviceID: [DeviceID: Adoption]]) -> Bool {
        adoptions.values.contains { $0[device]?.retired == true }
    }

    /// The name an adoption of `device` gives it, if any.
    static func adoptedName(of device: DeviceID, in adoptions: [DeviceID: [DeviceID: Adoption]]) -> String? {
        adoptions.values.lazy.compactMap { $0[device]?.name }.first
    }

    /// Stops reading `device`'s folder, remembering how far it was read;
    /// what it adopted and what is held back of it go.
    mutating func forget(_ device: DeviceID) {
        heldBack.forget(device)
        if let reader = readers.removeValue(forKey: device) { remembered[device] = reader.contiguous ?? ReadProgress.nothing }
        adoptions[device] = nil
    }
}
