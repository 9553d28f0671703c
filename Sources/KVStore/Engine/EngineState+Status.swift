import Foundation

/// The status: what `.kvfs/status`, `kvfs status` and `kvfs devices` show,
/// and what the health warnings of the log are taken from.
extension EngineState {
    /// The status at `now`, devices that have not closed their store judged
    /// quiet after `staleAfter` seconds without news. The state directory's
    /// path, and the mount point that holds it, are the store's.
    mutating func makeStatus(now: Date, staleAfter: TimeInterval, stateDirectory: String, mountPoint: String?) -> StoreStatus {
        var lastWrite: [DeviceID: HLCTimestamp] = [:]
        for winner in merged.winners.values {
            lastWrite[winner.stamp.device] = max(lastWrite[winner.stamp.device] ?? winner.stamp.time, winner.stamp.time)
        }
        var newest: [DeviceID: HLCTimestamp] = [:]  // the newest write known here of each device
        for (device, reader) in readers { newest[device] = reader.newest }
        newest[deviceID] = ownLatest
        let present = Set(sync.devices())
        var devices: [DeviceStatus] = []
        var progresses: [DeviceID: ReadProgress] = [:]
        for device in knownDevices.union([deviceID]).sorted() {
            let progress = sync.progress(of: device)
            progresses[device] = progress
            devices.append(status(of: device, progress: progress, present: present.contains(device), now: now,
                                  staleAfter: staleAfter, lastWrite: lastWrite[device], newest: newest))
        }
        let this = devices.first { $0.id == deviceID.hex }!
        let warnings = readers.values.flatMap(\.problems)
            + [sync.root.relocation()?.warning, ownAhead.warning(device: deviceID, folder: writer.folder.path)].compactMap { $0 }
            + devices.compactMap { $0.warning(staleAfter: staleAfter) }
            + lagWarnings(progresses: progresses, devices: devices, now: now, staleAfter: staleAfter)
        return StoreStatus(storeID: storeID, syncDirectory: sync.path, stateDirectory: stateDirectory,
                           mountPoint: mountPoint, device: this, usage: merged.usage, setAside: merged.setAside.sorted().map(\.string),
                           devices: devices, lastSync: lastSyncTime, staleAfter: staleAfter, warnings: warnings)
    }

    /// One device's health.
    private mutating func status(of device: DeviceID, progress: ReadProgress?, present: Bool, now: Date, staleAfter: TimeInterval,
                                 lastWrite: HLCTimestamp?, newest: [DeviceID: HLCTimestamp]) -> DeviceStatus {
        let isThis = device == deviceID
        let changed = present ? sync.folder(of: device).lastChange() : nil
        let silence = isThis ? nil : changed.map { now.timeIntervalSince($0) }
        let keeper = adoptions.first { $0.key != device && $0.value[device] != nil }?.key
        let state: DeviceStatus.State =
            if isThis { .this }
            else if isRetired(device) || (!present && adoptions.values.contains { $0[device]?.retired == true }) { .retired }
            else if !present { .vanished }
            else if progress?.closed == true { .stopped }
            else { DeviceStatus.State(silence: silence, staleAfter: staleAfter) }
        let read = (progress?.read ?? [:]).filter { $0.value != ReadProgress.nothing }
        return DeviceStatus(
            id: device.hex, name: displayName(of: device), state: state,
            lastWrite: lastWrite?.date, newestStamp: newest[device]?.date, folderChanged: changed,
            heartbeat: progress?.at?.date, secondsSinceHeard: silence, closed: progress?.closed ?? false,
            readUpTo: isThis ? nil : readers[device]?.contiguous?.date,
            read: Dictionary(uniqueKeysWithValues: read.map { ($0.key.hex, $0.value.date) }),
            behindSeconds: isThis ? behindOthers() : progress.map { lag(of: $0, behind: newest, reader: device) },
            keptBy: keeper.map { displayName(of: $0) })
    }

    /// How far a device's reading lags behind the newest writes known here
    /// of the devices it reads, in seconds.
    private func lag(of progress: ReadProgress, behind newest: [DeviceID: HLCTimestamp], reader: DeviceID) -> Double {
        newest.filter { $0.key != reader && !isRetired($0.key) }.map { device, time in
            Self.seconds(from: progress.read[device] ?? ReadProgress.nothing, to: time)
        }.max() ?? 0
    }

    /// How far this device lags behind what the others say they wrote, in seconds.
    private func behindOthers() -> Double {
        readers.filter { $0.key != deviceID }.compactMap { device, reader in
            sync.progress(of: device)?.own.map { Self.seconds(from: reader.contiguous ?? ReadProgress.nothing, to: $0) }
        }.max() ?? 0
    }

    /// The seconds from one stamp to a later one (0 when it is not later).
    private static func seconds(from start: HLCTimestamp, to end: HLCTimestamp) -> Double {
        guard end > start else { return 0 }
        return start == ReadProgress.nothing ? Double.infinity.nextDown : Double(end.milliseconds - start.milliseconds) / 1000
    }

    /// Devices that run and have not read this device's writes for long
    /// (their copy of its folder is stuck), and devices whose folder here
    /// holds less than they say they wrote, for long (the synchronizer does
    /// not deliver it).
    private func lagWarnings(progresses: [DeviceID: ReadProgress], devices: [DeviceStatus], now: Date,
                             staleAfter: TimeInterval) -> [SyncWarning] {
        let ownFolder = writer.folder.path
        var warnings: [SyncWarning] = []
        for device in devices where device.state == .active {
            guard let id = DeviceID(hex: device.id), let progress = progresses[id] else { continue }
            let label = "\(device.name) (\(device.id))"
            let read = progress.read[deviceID] ?? ReadProgress.nothing
            let unread = (merged.folders[deviceID] ?? [:]).values.map(\.stamp).filter { $0.device == deviceID && $0.time > read }
            if let oldest = unread.map(\.time).min(), now.timeIntervalSince(oldest.date) > staleAfter {
                warnings.append(SyncWarning(kind: .notReadingUs, device: device.id, file: ownFolder, message: """
                    \(label) runs but has not read this device's writes since \(DateText.format(oldest.date)): its copy of \
                    \(ownFolder) is not being updated
                    """, fix: """
                    check the synchronizer; this device alone writes that folder, so where a synchronizer reports a conflict \
                    on it (Unison's "[CONFLICT] Skipping devices/\(deviceID.hex)/…" after a replica was made with cp -r), \
                    take this machine's copy: `unison … -prefer <this machine's root>` once
                    """))
            }
            if let own = progress.own, let contiguous = readers[id]?.contiguous, own > contiguous,
               now.timeIntervalSince(own.date) > staleAfter {
                let folder = sync.folder(of: id).path
                warnings.append(SyncWarning(kind: .staleCopy, device: device.id, file: folder, message: """
                    \(label) says it wrote up to \(DateText.format(own.date)), but this copy of \(folder) holds its \
                    records only up to \(DateText.format(contiguous.date))
                    """, fix: """
                    the synchronizer does not deliver that folder's files here: check it (a conflict it skips? a paused \
                    folder?); that device alone writes the folder, so its machine's copy is the right one
                    """))
            }
        }
        return warnings
    }
}
