import Foundation

/// The status: what `.kvfs/status`, `kvfs status` and `kvfs devices` show,
/// and what the health warnings of the log are taken from. It is made in
/// three steps, so that thousands of device folders do not keep reads and
/// writes waiting: a survey of the folders on disk (``FolderSurvey``),
/// without the lock; a copy of what it needs of the engine's state
/// (``StatusInputs``), under the lock, brief (its dictionaries are copied on
/// write); and the status made from both, without the lock.
extension EngineState {
    /// What the status needs of this state, the device folders here being `present`.
    func statusInputs(present: some Sequence<DeviceID>) -> StatusInputs {
        let known = knownDevices(present: present)
        let (path, problems, latest, ahead) = own.withLock { folder in
            (folder.writer.folder.path, folder.reader.problems + folder.refusedAtOpen.filter { !folder.reader.problems.contains($0) },
             folder.latest, folder.aheadWarning(device: deviceID))
        }
        return StatusInputs(
            deviceID: deviceID, deviceName: context.deviceName, sync: sync, ownFolder: path, storeID: folders.storeID,
            merged: merged, readers: folders.readers.mapValues { StatusInputs.Reading(newest: $0.newest, contiguous: $0.contiguous) },
            problems: problems + folders.readers.values.flatMap(\.problems) + sealingWarnings, known: known, retired: known.filter(isRetired),
            adoptions: folders.adoptions, names: folders.names, ownLatest: latest, ownAhead: ahead, lastSyncTime: folders.lastSyncTime)
    }
}
