import Foundation

/// Delivery: which devices have read what (docs/sync.md § Delivery). A
/// device has read a record once its published progress (``ReadProgress``)
/// says it read the writer's folder up to the record's stamp; the writer
/// has it from the start.
extension EngineState {
    /// The devices that have read `key`'s current version, this one first
    /// and the others by name; nil when the key shows no value.
    mutating func deliveredTo(key: StoreKey) -> [DeviceInfo]? {
        guard let stamp = merged.visible[key]?.stamp else { return nil }
        let others = sync.devices().filter { device in
            device != deviceID && !isRetired(device) && (device == stamp.device || has(device, read: stamp))
        }
        return [DeviceInfo(id: deviceID, name: context.deviceName)] + others.map { info($0) }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }

    /// The devices `kvfs status` counts as active at `now` that have not
    /// read this device's latest writes of `keys` (of every key when nil),
    /// by name.
    mutating func devicesLacking(latestWritesOf keys: [StoreKey]?, now: Date, staleAfter: TimeInterval) -> [DeviceInfo] {
        let own = merged.folders[deviceID] ?? [:]
        let versions = keys.map { $0.compactMap { own[$0] } } ?? Array(own.values)
        guard let latest = versions.map(\.stamp).filter({ $0.device == deviceID }).max() else { return [] }
        let lacking = sync.devices().filter { device in
            guard device != deviceID else { return false }
            let progress = sync.progress(of: device)
            let silence = sync.folder(of: device).lastChange().map { now.timeIntervalSince($0) }
            return state(of: device, progress: progress, present: true, silence: silence, staleAfter: staleAfter) == .active
                && !((progress?.read[deviceID]).map { $0 >= latest.time } ?? false)
        }
        return lacking.map { info($0) }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }

    /// Whether `device`'s published progress says it read `stamp`'s writer's folder up to it.
    private func has(_ device: DeviceID, read stamp: Stamp) -> Bool {
        (sync.progress(of: device)?.read[stamp.device]).map { $0 >= stamp.time } ?? false
    }

    private mutating func info(_ device: DeviceID) -> DeviceInfo {
        DeviceInfo(id: device, name: displayName(of: device))
    }
}
