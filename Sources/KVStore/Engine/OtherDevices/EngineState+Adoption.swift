import Foundation

/// What the folders say they adopted of each other (``Adoption``), and what
/// this device adopts of a retired or vanished device.
extension EngineState {
    /// How recently a device that has not closed its store must have changed
    /// its folder to look alive to `kvfs retire`.
    static let aliveWindow: TimeInterval = 120

    /// What adopting a device takes, planned inside the engine's `Mutex` as
    /// the compaction that writes the copies starts.
    struct AdoptionPlan: Sendable {
        let device: DeviceID
        /// Whether someone retires it, rather than its folder having vanished.
        let retired: Bool
        /// Its records that still win and no other folder holds.
        let copies: [JournalRecord]
        /// Its other versions that history keeps and no other folder holds
        /// (``EngineState/historyToAdopt(of:)``): in memory, and copied from its files.
        let history: (records: [JournalRecord], copied: [StoredRecord])
        /// Its records stamped too far ahead to merge yet: kept all the same, unless it is revoked.
        let waiting: [JournalRecord]
        /// Those records, dropped because it is revoked: a revoked device leaves nothing to merge later.
        let dropped: Int
        /// How far this device has read its folder without a gap.
        let upTo: HLCTimestamp?
        /// What its folder adopted of others.
        let inherited: [DeviceID: Adoption]

        /// How many of its values, and of its removals, are kept.
        var kept: (values: Int, removals: Int) {
            (copies.count { $0.changes[0].value != nil }, copies.count { $0.changes[0].value == nil })
        }
        /// Whether this device's snapshot must hold records of it.
        var needsSnapshot: Bool { !copies.isEmpty || !waiting.isEmpty || !history.records.isEmpty || !history.copied.isEmpty }
        /// Whether there is anything to record at all.
        var isNeeded: Bool { retired || needsSnapshot || !inherited.isEmpty }
    }

    /// What adopting `device` takes now; when it is `revoking` it (`kvfs retire --revoke`), its records
    /// held back for their stamps far ahead are dropped rather than kept to merge once their time comes.
    mutating func planAdoption(of device: DeviceID, retired: Bool, revoking: Bool = false) -> AdoptionPlan {
        let heldBack = folders.heldBack.records(of: device)
        return AdoptionPlan(device: device, retired: retired,
                            copies: merged.records(inFolder: device).filter { !merged.holds($0, outside: device) },
                            history: historyToAdopt(of: device),
                            waiting: revoking ? [] : heldBack, dropped: revoking ? heldBack.count : 0,
                            upTo: folders.readers[device]?.contiguous,
                            inherited: (folders.adoptions[device] ?? [:]).filter { $0.key != deviceID })
    }

    /// Records an adoption made at `at`, whose copies are in this device's
    /// snapshot `generation` (0: none were needed); the folder says so once
    /// ``ProgressPublisher/publishAdoptions(_:)`` has written it.
    mutating func recordAdoption(_ plan: AdoptionPlan, at: HLCTimestamp, generation: UInt64) {
        if plan.needsSnapshot || plan.dropped > 0 { folders.heldBack.forget(plan.device) }
        if plan.needsSnapshot { _ = folders.heldBack.hold(plan.waiting, of: deviceID, replacing: false) }
        let name = displayName(of: plan.device)
        var entries = plan.inherited.mapValues { Adoption(upTo: $0.upTo, generation: generation, at: at, retired: $0.retired, name: $0.name) }
        entries[plan.device] = Adoption(upTo: plan.upTo, generation: generation, at: at, retired: plan.retired, name: name)
        folders.adoptions[deviceID, default: [:]].merge(entries) { $0.merged(with: $1) }
    }

    /// Stops reading the folder of a device whose records this device
    /// adopted (`kept` of them) when its folder vanished, and says so.
    /// Returns the keys whose visible entry changed.
    mutating func forgetVanished(_ device: DeviceID, kept: (values: Int, removals: Int)) -> Set<StoreKey> {
        if kept.values + kept.removals > 0 {
            warn("""
                devices/\(device.hex) (\(displayName(of: device))) vanished; its \(kept.values) values and \
                \(kept.removals) removals that still count are kept in this device's folder (\(own.withLock { $0.writer.folder.path })). \
                Nothing is lost; if the folder went by mistake and the device still runs, it writes it again
                """)
        }
        return forgetFolder(of: device)
    }

    /// Stops reading a device's folder (gone, or retired); returns the keys whose visible entry changed.
    @discardableResult
    mutating func forgetFolder(of device: DeviceID) -> Set<StoreKey> {
        folders.forget(device)
        history.forget(device)
        return noteVisibleChanges(merged.replace(recordsIn: device, with: []))
    }

    /// Reads what every folder says it adopted and applies the retirements
    /// in force (``Adoption``): a retired device's own folder's records up to
    /// the adopted stamp are ignored, and read again should that stamp fall
    /// (its adopter vanished, unretired). A vanished device's folder is not
    /// filtered: it may come back, still writing. Returns the keys whose
    /// visible entry changed.
    mutating func applyAdoptions() -> Set<StoreKey> {
        // The other folders' adoptions were taken as each was read (`read(_:seen:onlyIfChanged:)`); only
        // folders that adopted something are kept: `isRetired` and the status look through every entry
        // for each device, which with an entry per folder cost n² (minutes under the store's lock,
        // for a sync directory holding 20,000 empty device folders).
        // This device's own are kept here; its other processes may have adopted more (`kvfs retire`).
        // Those count once this process has read the snapshot that holds the copies.
        let ownSnapshot = own.withLock { $0.reader.snapshotGeneration } ?? 0
        for (device, entry) in sync.adoptions(of: deviceID) where entry.generation <= ownSnapshot {
            folders.adoptions[deviceID, default: [:]][device] = folders.adoptions[deviceID]?[device].map { $0.merged(with: entry) } ?? entry
        }
        var upTo: [DeviceID: HLCTimestamp] = [:]
        for (folder, entries) in folders.adoptions {
            let generationRead = folder == deviceID ? UInt64.max : folders.readers[folder]?.snapshotGeneration ?? 0
            for case let (device, entry) in entries where entry.retired && entry.generation <= generationRead {
                if let time = entry.upTo { upTo[device] = max(upTo[device] ?? time, time) }
            }
        }
        if let own = upTo[deviceID] { clock.observe(own) }  // its next writes must not be taken for adopted ones
        var changed: Set<StoreKey> = []
        for device in Set(upTo.keys).union(folders.adoptedUpTo.keys) where upTo[device] != folders.adoptedUpTo[device] {
            let before = folders.adoptedUpTo[device]
            folders.adoptedUpTo[device] = upTo[device]
            if let time = upTo[device], before.map({ time > $0 }) ?? true {
                changed.formUnion(merged.forget(recordsIn: device, upTo: time))
            } else {
                changed.formUnion(reread(device))
            }
        }
        return noteVisibleChanges(changed)
    }

    /// Every other device this one knows of: with a folder here, read before
    /// (``remembered``), or adopted by some folder.
    var knownDevices: Set<DeviceID> { knownDevices(present: sync.devices()) }

    /// ``knownDevices``, the device folders here being `present`.
    func knownDevices(present: some Sequence<DeviceID>) -> Set<DeviceID> {
        Set(present).union(folders.readers.keys).union(merged.folders.keys).union(folders.remembered.keys)
            .union(folders.adoptions.values.flatMap(\.keys)).subtracting([deviceID])
    }

    /// Whether `device` was retired and nothing it wrote since was read here: nobody waits for it any more.
    func isRetired(_ device: DeviceID) -> Bool {
        FolderView.saysRetired(device, in: folders.adoptions) && (merged.folders[device] ?? [:]).isEmpty
    }

    /// Reads a device's folder again from its beginning.
    private mutating func reread(_ device: DeviceID) -> Set<StoreKey> {
        guard device == deviceID || sync.devices().contains(device) else { return [] }
        let reader = DeviceFolderReader(device: device, folder: sync.folder(of: device), warn: context.warn)
        folders.readers[device] = reader
        var batch = reader.readNew()
        batch.replacesAll = true
        return merge(batch, from: device)
    }

    // MARK: Retiring

    /// The name of `device`, and whether its folder is here, once it may be
    /// retired. Refused for this device, an unknown one, and, unless `force`,
    /// one that looks alive or whose folder has not fully arrived.
    mutating func checkRetirable(_ device: DeviceID, force: Bool) throws(KVStoreError) -> (name: String, present: Bool) {
        let name = displayName(of: device)
        let label = "\(name) (\(device.hex))"
        guard !isClosed else { throw .io(path: sync.path, reason: "the store is closed") }
        guard device != deviceID else { throw .retireRefused(device: label, reason: "it is this device; retire it from another one") }
        let present = sync.devices().contains(device)
        guard present || knownDevices.contains(device) else {
            throw .retireRefused(device: label, reason: "no such device here (`kvfs devices` lists them)")
        }
        if !force { try refuseIfAliveOrIncomplete(device, label: label) }
        return (name, present)
    }

    /// Refuses to retire a device that looks alive, or whose folder has not fully arrived.
    private func refuseIfAliveOrIncomplete(_ device: DeviceID, label: String) throws(KVStoreError) {
        let progress = sync.progress(of: device)
        let read = folders.readers[device]?.contiguous
        if let own = progress?.own, read.map({ $0 < own }) ?? true {
            throw .retireRefused(device: label, reason: """
                its folder has not fully arrived here: it wrote up to \(own), and this copy of devices/\(device.hex) \
                holds its records up to \(read?.description ?? "nothing") without a gap; wait for the synchronizer, \
                or pass --force to keep only what is here
                """)
        }
        if progress?.closed != true, let changed = sync.folder(of: device).lastChange(),
           Date().timeIntervalSince(changed) < Self.aliveWindow {
            throw .retireRefused(device: label, reason: """
                it looks alive: it has not closed its store, and its folder changed \
                \(Int(Date().timeIntervalSince(changed))) s ago; unmount it first, or pass --force
                """)
        }
    }
}
