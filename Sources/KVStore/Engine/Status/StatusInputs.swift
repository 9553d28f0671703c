import Foundation

/// What the status needs of the engine's state, copied under its lock.
struct StatusInputs {
    /// How far a reader has read its device's folder.
    struct Reading {
        var newest: HLCTimestamp?, contiguous: HLCTimestamp?
    }

    let deviceID: DeviceID, deviceName: String, sync: SyncDirectory, ownFolder: String, storeID: String
    let merged: MergedState
    let readers: [DeviceID: Reading]
    /// What keeps the readers from reading everything their folders hold.
    let problems: [SyncWarning]
    /// Every other device known (``EngineState/knownDevices``), and the retired ones among them.
    let known: Set<DeviceID>, retired: Set<DeviceID>
    let adoptions: [DeviceID: [DeviceID: Adoption]]
    let names: [DeviceID: String]
    let ownLatest: HLCTimestamp?
    /// What the status says of this device's own records stamped far ahead, if any.
    let ownAhead: SyncWarning?
    let lastSyncTime: Date?

    /// The status at `now`, devices that have not closed their store judged
    /// quiet after `staleAfter` seconds without news; `folders` are the
    /// device folders here, as a survey saw them, and `relocation` what
    /// became of the sync directory. The state directory's path, and the
    /// mount point that holds it, are the store's.
    func status(now: Date, staleAfter: TimeInterval, folders: [DeviceID: FolderSurvey.Seen], relocation: HeldFolder.Relocation?,
                stateDirectory: String, mountPoint: String?) -> StoreStatus {
        var lastWrite: [DeviceID: HLCTimestamp] = [:]
        for winner in merged.winners.values {
            lastWrite[winner.stamp.device] = max(lastWrite[winner.stamp.device] ?? winner.stamp.time, winner.stamp.time)
        }
        var newest: [DeviceID: HLCTimestamp] = [:]  // the newest write known here of each device
        for (device, reader) in readers { newest[device] = reader.newest }
        newest[deviceID] = ownLatest
        var devices: [DeviceStatus] = []
        for device in known.union([deviceID]).sorted() {
            devices.append(status(of: device, folders: folders, now: now, staleAfter: staleAfter,
                                  lastWrite: lastWrite[device], newest: newest))
        }
        let this = devices.first { $0.id == deviceID.hex }!
        let warnings = problems + [relocation?.warning, ownAhead].compactMap { $0 }
            + devices.compactMap { $0.warning(staleAfter: staleAfter) }
            + lagWarnings(folders: folders, devices: devices, now: now, staleAfter: staleAfter)
        return StoreStatus(storeID: storeID, syncDirectory: sync.path, stateDirectory: stateDirectory,
                           mountPoint: mountPoint, device: this, usage: merged.usage, setAside: merged.setAside.sorted().map(\.string),
                           devices: devices, lastSync: lastSyncTime, staleAfter: staleAfter, warnings: warnings,
                           sealed: sync.sealing.map { Self.sealedStatus($0.keys) })
    }

    /// A device's name: as its folder says now (the survey's `folder`), else
    /// as it was last read, or as an adoption of it says, or its id
    /// (``EngineState/displayName(of:)``).
    func name(of device: DeviceID, folder: FolderSurvey.Seen?) -> String {
        if device == deviceID { return folder?.name ?? deviceName }
        return folder?.name ?? names[device] ?? FolderView.adoptedName(of: device, in: adoptions) ?? sync.rosterName(of: device) ?? device.hex
    }

    /// What the status says of a sealed store's roster, from the keys in force.
    private static func sealedStatus(_ keys: SealingKeys) -> SealedStatus {
        SealedStatus(rosterVersion: keys.rosterVersion, epoch: keys.currentEpoch,
                     members: keys.members.keys.sorted().map { SealedStatus.Member(id: $0.hex, name: keys.memberNames[$0] ?? $0.hex) },
                     recoveryKey: keys.hasRecoveryKey)
    }

    /// One device's health.
    private func status(of device: DeviceID, folders: [DeviceID: FolderSurvey.Seen], now: Date, staleAfter: TimeInterval,
                        lastWrite: HLCTimestamp?, newest: [DeviceID: HLCTimestamp]) -> DeviceStatus {
        let isThis = device == deviceID
        let folder = folders[device]
        let progress = folder?.progress
        let changed = folder?.lastChange
        let silence = isThis ? nil : changed.map { now.timeIntervalSince($0) }
        let keeper = adoptions.first { $0.key != device && $0.value[device] != nil }?.key
        let state = state(of: device, folder: folder, silence: silence, staleAfter: staleAfter)
        let read = (progress?.read ?? [:]).filter { $0.value != ReadProgress.nothing }
        return DeviceStatus(
            id: device.hex, name: name(of: device, folder: folder), state: state,
            lastWrite: lastWrite?.date, newestStamp: newest[device]?.date, folderChanged: changed,
            heartbeat: progress?.at?.date, secondsSinceHeard: silence, closed: progress?.closed ?? false,
            readUpTo: isThis ? nil : readers[device]?.contiguous?.date,
            read: Dictionary(uniqueKeysWithValues: read.map { ($0.key.hex, $0.value.date) }),
            behindSeconds: isThis ? behindOthers(folders: folders) : progress.map { lag(of: $0, behind: newest, reader: device) },
            keptBy: keeper.map { self.name(of: $0, folder: folders[$0]) })
    }

    /// What is known of a device's life, its folder as a survey saw it (nil:
    /// none), nothing of it having arrived for `silence` seconds.
    func state(of device: DeviceID, folder: FolderSurvey.Seen?, silence: Double?, staleAfter: TimeInterval) -> DeviceStatus.State {
        if device == deviceID { return .this }
        if retired.contains(device) || (folder == nil && FolderView.saysRetired(device, in: adoptions)) { return .retired }
        if folder == nil { return .vanished }
        if folder?.progress?.closed == true { return .stopped }
        return DeviceStatus.State(silence: silence, staleAfter: staleAfter)
    }

    /// How far a device's reading lags behind the newest writes known here
    /// of the devices it reads, in seconds.
    private func lag(of progress: ReadProgress, behind newest: [DeviceID: HLCTimestamp], reader: DeviceID) -> Double {
        newest.filter { $0.key != reader && !retired.contains($0.key) }.map { device, time in
            Self.seconds(from: progress.read[device] ?? ReadProgress.nothing, to: time)
        }.max() ?? 0
    }

    /// How far this device lags behind what the others say they wrote, in seconds.
    private func behindOthers(folders: [DeviceID: FolderSurvey.Seen]) -> Double {
        readers.compactMap { device, reader in
            folders[device]?.progress?.own.map { Self.seconds(from: reader.contiguous ?? ReadProgress.nothing, to: $0) }
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
    private func lagWarnings(folders: [DeviceID: FolderSurvey.Seen], devices: [DeviceStatus], now: Date,
                             staleAfter: TimeInterval) -> [SyncWarning] {
        var warnings: [SyncWarning] = []
        for device in devices where device.state == .active {
            guard let id = DeviceID(hex: device.id), let progress = folders[id]?.progress else { continue }
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
