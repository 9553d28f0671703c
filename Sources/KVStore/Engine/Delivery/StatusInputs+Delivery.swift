import Foundation

/// Delivery: which devices have read what (docs/sync.md § Delivery). A
/// device has read a record once its published progress (``ReadProgress``)
/// says it read the writer's folder up to the record's stamp; the writer
/// has it from the start. Worked out as the status is, from a survey of the
/// folders and a copy of the engine's state, without the engine's lock.
extension StatusInputs {
    /// The devices that have read the version stamped `stamp`: this one
    /// first, then the others with a folder here (`folders`), not retired, by name.
    func devices(thatHaveRead stamp: Stamp, folders: [DeviceID: FolderSurvey.Seen]) -> [DeviceInfo] {
        let others = known.filter { device in
            guard let folder = folders[device], !retired.contains(device) else { return false }
            return device == stamp.device || (folder.progress?.read[stamp.device]).map { $0 >= stamp.time } ?? false
        }
        return [DeviceInfo(id: deviceID, name: deviceName)] + byName(others, folders)
    }

    /// The devices counted as active in the status at `now` that have not
    /// read this device's latest writes of `keys` (of every key when nil), by name.
    func devices(lackingLatestWritesOf keys: [StoreKey]?, folders: [DeviceID: FolderSurvey.Seen], now: Date,
                 staleAfter: TimeInterval) -> [DeviceInfo] {
        let own = merged.folders[deviceID] ?? [:]
        let versions = keys.map { $0.compactMap { own[$0] } } ?? Array(own.values)
        guard let latest = versions.map(\.stamp).filter({ $0.device == deviceID }).max() else { return [] }
        return activeDevices(lacking: latest, folders: folders, now: now, staleAfter: staleAfter)
    }

    /// The devices counted as active in the status at `now` that have not
    /// read the version stamped `stamp` (its writer has), by name.
    func activeDevices(lacking stamp: Stamp, folders: [DeviceID: FolderSurvey.Seen], now: Date,
                       staleAfter: TimeInterval) -> [DeviceInfo] {
        byName(known.filter { device in
            let folder = folders[device]
            let silence = folder?.lastChange.map { now.timeIntervalSince($0) }
            return device != stamp.device && state(of: device, folder: folder, silence: silence, staleAfter: staleAfter) == .active
                && !((folder?.progress?.read[stamp.device]).map { $0 >= stamp.time } ?? false)
        }, folders)
    }

    private func byName(_ devices: some Sequence<DeviceID>, _ folders: [DeviceID: FolderSurvey.Seen]) -> [DeviceInfo] {
        devices.map { DeviceInfo(id: $0, name: name(of: $0, folder: folders[$0])) }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }
}
