import Foundation

/// What `kvfs retire` did.
public struct RetiredDevice: Sendable, CustomStringConvertible {
    /// The retired device.
    public var id: DeviceID
    /// Its name.
    public var name: String
    /// How many of its values, and of its removals, still counted: now kept in this device's folder.
    public var values: Int, removals: Int
    /// This device's folder, which keeps them.
    public var keptIn: String
    /// Revoked, how many of its records stamped far ahead (held back until their time) were dropped, not kept.
    public var dropped = 0
    /// Why its folder is still there (it could not be removed), or nil once it is gone.
    public var folderLeft: String?

 /// What `kvfs retire` prints: the device, what was kept where, and its folder's fate.
    public var description: String {
        let kept = "its \(values) value\(values == 1 ? "" : "s") and \(removals) removal\(removals == 1 ? "" : "s") that still count are kept in \(keptIn)"
        let folder = folderLeft.map { "; remove its folder by hand (\($0))" } ?? "; its folder is removed"
        let dropped = dropped == 0 ? ""
            : "; its \(dropped) record\(dropped == 1 ? "" : "s") stamped far ahead \(dropped == 1 ? "is" : "are") dropped: a revoked device leaves nothing to merge later"
        return "retired \(name) (\(id.hex)): \(kept)\(folder)\(dropped)"
    }
}

/// Retiring devices, and keeping what a vanished device's folder held (``Adoption``).
extension DeviceStore {
    /// Retires another device: this device adopts every record of it that
    /// still wins (its values and removals, with their original stamps) into
    /// its own folder, says so in `adopted.json`, and removes the device's
    /// folder. Every device then shows what it showed before, and none waits
    /// for the retired one any more (`TombstoneCollection`).
    ///
    /// Refused for this device, an unknown one, and, unless `force`, one that
    /// looks alive (it has not closed its store and its folder changed lately)
    /// or whose folder has not fully arrived here (its progress names records
    /// this device has not read).
    ///
    /// `revoking` (`kvfs retire --revoke`, before its revocation): the records it stamped too far ahead to
    /// merge yet (docs/sync.md § Stamps from the future) are dropped, not kept to merge once their time comes.
    public func retire(_ device: DeviceID, force: Bool = false, revoking: Bool = false) throws(KVStoreError) -> RetiredDevice {
        refresh()
        defer { announceVisibleChanges() }
        let (name, present) = try engine.withLock { state throws(KVStoreError) in try state.checkRetirable(device, force: force) }
        let ownFolder = sync.folder(of: deviceID).path
        guard let kept = adopt(device, retired: true, revoking: revoking) else {
            throw .io(path: ownFolder, reason: "cannot write the snapshot that keeps its records")
        }
        var folderLeft: String?
        if present {
            do throws(KVStoreError) {
                try sync.removeFolder(of: device)
            } catch {
                folderLeft = error.description
            }
        }
        if folderLeft == nil { _ = engine.withLock { $0.forgetFolder(of: device) } }
        publishProgress()
        if kept.dropped > 0 {
            context.warn("\(name) (\(device.hex)) is revoked: its \(kept.dropped) records stamped far ahead are dropped, not kept to merge later")
        }
        return RetiredDevice(id: device, name: name, values: kept.values, removals: kept.removals,
                             keptIn: ownFolder, dropped: kept.dropped, folderLeft: folderLeft)
    }

    /// The one known device that `text` names: its id, a prefix of its id, or its name.
    public func device(matching text: String) throws(KVStoreError) -> DeviceID {
        let known = engine.withLock { $0.knownDevices }
        let matches = known.filter { $0.hex == text || (text.count >= 4 && $0.hex.hasPrefix(text)) || name(of: $0) == text }
        guard matches.count == 1, let device = matches.first else {
            throw .retireRefused(device: text, reason: matches.isEmpty ? "no device has that id or name (`kvfs devices` lists them)"
                                                   : "\(matches.count) devices match; give more of the id")
        }
        return device
    }

    /// Folders that vanished without anyone retiring their devices (a
    /// mistake, a synchronizer carrying a removal over): keep what they
    /// held, so that no value or removal they won is lost. Returns the keys
    /// whose visible entry changed. What cannot be kept now is tried again
    /// at the next refresh.
    func adoptVanished(_ devices: [DeviceID]) -> Set<StoreKey> {
        let adopted = devices.compactMap { device in adopt(device, retired: false).map { (device, (values: $0.values, removals: $0.removals)) } }
        return engine.withLock { state in
            var changed: Set<StoreKey> = []
            for (device, kept) in adopted { changed.formUnion(state.forgetVanished(device, kept: kept)) }
            return changed.union(state.applyAdoptions())
        }
    }

    /// Adopts `device`'s records that still win and no other folder holds,
    /// with what its folder adopted before, through a compaction whose
    /// snapshot holds them; records and publishes the adoption once that
    /// snapshot is written. Returns how many values and removals were kept,
    /// or nil when they could not be written.
    func adopt(_ device: DeviceID, retired: Bool, revoking: Bool = false) -> (values: Int, removals: Int, dropped: Int)? {
        var plan: EngineState.AdoptionPlan?
        let outcome = compactor.compact(engine) { state in
            let planned = state.planAdoption(of: device, retired: retired, revoking: revoking)
            plan = planned
            return planned.needsSnapshot ? Compactor.Additions(adopted: planned.copies + planned.history.records, waiting: planned.waiting,
                                                               history: planned.history.copied) : nil
        }
        guard let plan else { return nil }  // the store is closed
        let kept = (plan.kept.values, plan.kept.removals, plan.dropped)
        guard plan.isNeeded else { return kept }
        let at: HLCTimestamp, generation: UInt64
        switch outcome {
        case let .written(stamp, snapshot): (at, generation) = (stamp, snapshot)
        case .notNeeded:
            guard let now = try? context.clock.now() else { return nil }
            (at, generation) = (now, 0)
        case .failed, .unfinished: return nil
        }
        engine.withLock { $0.recordAdoption(plan, at: at, generation: generation) }
        publishOwnAdoptions()
        keepRetentionSetting(of: device)
        return kept
    }

    /// Keeps the retention `device`'s folder set, when it is the store's
    /// (the newest): copied, with its stamp, into this device's folder, so
    /// that the store's setting stays when that folder goes.
    private func keepRetentionSetting(of device: DeviceID) {
        guard let setting = sync.retentionSetting(of: device),
              sync.retentionSetting(of: deviceID).map({ setting.stamp > $0.stamp }) ?? true else { return }
        do throws(KVStoreError) {
            try sync.publish(setting, of: deviceID)
        } catch {
            context.warn("cannot keep the history retention \(device.hex) set: \(error)")
        }
    }

    /// Publishes what this device's folder adopted, as it stands now, with
    /// what the device's other processes published: while no compaction
    /// runs, so that they publish one at a time (they adopt through one).
    func publishOwnAdoptions() {
        compactor.whileIdle {
            progress.publishAdoptions { [sync, deviceID] in
                let published = sync.adoptions(of: deviceID)
                return engine.withLock { state in state.folders.adoptions[deviceID] }.map { $0.merging(published) { $0.merged(with: $1) } }
            }
        }
    }
}
