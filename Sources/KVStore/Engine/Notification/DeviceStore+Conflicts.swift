import Foundation

/// Conflicts: this device's values that other devices' concurrent writes
/// replaced (docs/sync.md § Conflicts).
extension DeviceStore {
    /// Logs one line (``ConflictReport``) for each value of this device that
    /// another device's concurrent write replaced since the last call. At
    /// open, `shownAtClose` is what the device showed when it last closed:
    /// only a value it still showed then was replaced while it was away (it
    /// reads its folder and the others' again at each open, and would find
    /// every earlier conflict anew).
    func reportConflicts(shownAtClose: [StoreKey: Stamp]? = nil) {
        let options = storeOptions
        let reports = engine.withLock { state in
            let lostWrites = state.merged.takeLostWrites().filter { lostWrite in
                shownAtClose.map { $0[lostWrite.key] == lostWrite.lost } ?? true
            }
            return lostWrites.map { lostWrite in
                let version = state.keyVersions(of: lostWrite.key).first { $0.stamp == lostWrite.lost }?.name
                return ConflictReport(lostWrite, version: version, name: { state.displayName(of: $0) }, storeOptions: options)
            }
        }
        for report in reports { notifier.changeLog.append(report) }
    }

    /// The options that name this store and device on kvfs's command line:
    /// none for the default store, `--store ID` for another store of the
    /// default root, else `--sync-dir DIR`; and `--state-dir DIR` when the
    /// state directory is not the one those options take by default.
    var storeOptions: [String] {
        var options: [String] = []
        if syncDirectory != Self.defaultSyncDirectory.standardizedFileURL {
            let name = syncDirectory.lastPathComponent
            let inRoot = syncDirectory.deletingLastPathComponent().standardizedFileURL == StoreRoot.default.url
            options = inRoot && (try? StoreIdentifier(name)) != nil ? ["--store", name] : ["--sync-dir", syncDirectory.path]
        }
        if stateDirectory != Self.defaultStateDirectory(for: syncDirectory).standardizedFileURL {
            options += ["--state-dir", stateDirectory.path]
        }
        return options
    }
}
