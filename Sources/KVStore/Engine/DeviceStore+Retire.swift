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
    /// Why its folder is still there (it could not be removed), or nil once it is gone.
    public var folderLeft: String?

    public var description: String {
        let kept = "its \(values) value\(values == 1 ? "" : "s") and \(removals) removal\(removals == 1 ? "" : "s") that still count are kept in \(keptIn)"
        let folder = folderLeft.map { "; remove its folder by hand (\($0))" } ?? "; its folder is removed"
        return "retired \(name) (\(id.hex)): \(kept)\(folder)"
    }
}

/// Retiring devices, and keeping what a vanished device's folder held (``Adoption``).
extension DeviceStore {
    /// How recently a device that has not closed its store must have changed
    /// its folder to look alive to ``retire(_:force:)``.
    static let aliveWindow: TimeInterval = 120

    /// Retires another device: this device adopts every record of it that
    /// still wins (its values and removals, with their original stamps) into
    /// its own folder, says so in `adopted.json`, and removes the device's
    /// folder. Every device then shows what it showed before, and none waits
    /// for the retired one any more (``TombstoneCollection``).
    ///
    /// Refused for this device, an unknown one, and, unless `force`, one that
    /// looks alive (it has not closed its store and its folder changed lately)
    /// or whose folder has not fully arrived here (its progress names records
    /// this device has not read).
    public func retire(_ device: DeviceID, force: Bool = false) throws(KVStoreError) -> RetiredDevice {
        refresh()
        waitForCompaction()  // one a write started: the adoption compacts again, at once
        defer { announceVisibleChanges() }
        let retired = try retireWithLock(device, force: force)
        publishProgress()
        return retired
    }

    private func retireWithLock(_ device: DeviceID, force: Bool) throws(KVStoreError) -> RetiredDevice {
        lock.lock()
        defer { lock.unlock() }
        let name = displayName(of: device)
        let label = "\(name) (\(device.hex))"
        guard !closed else { throw .io(path: syncDirectory.path, reason: "the store is closed") }
        guard device != deviceID else { throw .retireRefused(device: label, reason: "it is this device; retire it from another one") }
        let present = sync.devices().contains(device)
        guard present || knownDevices.contains(device) else {
            throw .retireRefused(device: label, reason: "no such device here (`kvfs devices` lists them)")
        }
        if !force { try checkRetirable(device, label: label) }
        guard let kept = adopt(device, retired: true) else {
            throw .io(path: writer.folder.path, reason: "cannot write the snapshot that keeps its records")
        }
        var folderLeft: String?
        if present {
            do throws(KVStoreError) {
                try sync.removeFolder(of: device)
            } catch {
                folderLeft = error.description
            }
        }
        if folderLeft == nil { forgetFolder(of: device) }
        return RetiredDevice(id: device, name: name, values: kept.values, removals: kept.removals,
                             keptIn: writer.folder.path, folderLeft: folderLeft)
    }

    /// The one known device that `text` names: its id, a prefix of its id, or its name.
    public func device(matching text: String) throws(KVStoreError) -> DeviceID {
        let known = lock.withLock { knownDevices }
        let matches = known.filter { $0.hex == text || (text.count >= 4 && $0.hex.hasPrefix(text)) || name(of: $0) == text }
        guard matches.count == 1, let device = matches.first else {
            throw .retireRefused(device: text, reason: matches.isEmpty ? "no device has that id or name (`kvfs devices` lists them)"
                                                   : "\(matches.count) devices match; give more of the id")
        }
        return device
    }

    /// Refuses to retire a device that looks alive, or whose folder has not fully arrived. Called with the lock held.
    private func checkRetirable(_ device: DeviceID, label: String) throws(KVStoreError) {
        let progress = sync.progress(of: device)
        let read = readers[device]?.contiguous
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

    /// A device's folder vanished without anyone retiring it (a mistake, a
    /// synchronizer carrying a removal over): keep what it held, so that no
    /// value or removal it won is lost. Returns the keys whose visible entry
    /// changed. Called with the lock held.
    func adoptVanished(_ device: DeviceID) -> Set<String> {
        guard let kept = adopt(device, retired: false) else { return [] }  // tried again at the next refresh
        if kept.values + kept.removals > 0 {
            warningHandler("""
                devices/\(device.hex) (\(displayName(of: device))) vanished; its \(kept.values) values and \
                \(kept.removals) removals that still count are kept in this device's folder (\(writer.folder.path)). \
                Nothing is lost; if the folder went by mistake and the device still runs, it writes it again
                """)
        }
        return forgetFolder(of: device)
    }

    /// Adopts `device`'s records that still win and no other folder holds,
    /// with what its folder adopted before, through a compaction; publishes
    /// the adoption. Returns how many values and removals were kept, or nil
    /// when they could not be written. Called with the lock held.
    func adopt(_ device: DeviceID, retired: Bool) -> (values: Int, removals: Int)? {
        let copies = merged.records(inFolder: device).filter { !merged.holds($0, outside: device) }
        let kept = (values: copies.count { $0.changes[0].value != nil }, removals: copies.count { $0.changes[0].value == nil })
        let upTo = readers[device]?.contiguous
        let inherited = (adoptions[device] ?? [:]).filter { $0.key != deviceID }  // what it kept of others
        let waiting = heldBack.records(of: device)  // stamped too far ahead to merge yet: kept all the same
        guard retired || !copies.isEmpty || !waiting.isEmpty || !inherited.isEmpty else { return kept }
        guard var (at, generation) = (try? clock.now()).map({ ($0, UInt64(0)) }) else { return nil }
        if !copies.isEmpty || !waiting.isEmpty {
            guard let stamp = compact(adopting: copies, heldBack: waiting) else { return nil }
            heldBack.forget(device)
            _ = heldBack.hold(waiting, of: deviceID, replacing: false)
            (at, generation) = (stamp, writer.generation)
        }
        let name = displayName(of: device)
        var entries = inherited.mapValues { Adoption(upTo: $0.upTo, generation: generation, at: at, retired: $0.retired, name: $0.name) }
        entries[device] = Adoption(upTo: upTo, generation: generation, at: at, retired: retired, name: name)
        adoptions[deviceID, default: [:]].merge(entries) { $0.merged(with: $1) }
        publishOwnAdoptions()
        return kept
    }

    /// Stops reading a device's folder (gone, or retired). Called with the lock held.
    @discardableResult
    private func forgetFolder(of device: DeviceID) -> Set<String> {
        heldBack.forget(device)
        if let reader = readers.removeValue(forKey: device) { remembered[device] = reader.contiguous ?? ReadProgress.nothing }
        adoptions[device] = nil
        return noteVisibleChanges(merged.replace(recordsIn: device, with: []))
    }

    /// Reads what every folder says it adopted and applies the retirements
    /// in force (``Adoption``): a retired device's own folder's records up to
    /// the adopted stamp are ignored, and read again should that stamp fall
    /// (its adopter vanished, unretired). A vanished device's folder is not
    /// filtered: it may come back, still writing. Returns the keys whose
    /// visible entry changed. Called with the lock held.
    func applyAdoptions() -> Set<String> {
        // Only folders that adopted something are kept: `isRetired` and the status look through every
        // entry for each device, which with an entry per folder cost n² (minutes, with the store's lock
        // held, for a sync directory holding 20,000 empty device folders).
        for device in sync.devices() where device != deviceID {
            let adopted = sync.adoptions(of: device)
            adoptions[device] = adopted.isEmpty ? nil : adopted
        }
        if adoptions[deviceID] == nil { adoptions[deviceID] = sync.adoptions(of: deviceID) }  // then kept here
        var upTo: [DeviceID: HLCTimestamp] = [:]
        for (folder, entries) in adoptions {
            let generationRead = folder == deviceID ? UInt64.max : readers[folder]?.snapshotGeneration ?? 0
            for case let (device, entry) in entries where entry.retired && entry.generation <= generationRead {
                if let time = entry.upTo { upTo[device] = max(upTo[device] ?? time, time) }
            }
        }
        if let own = upTo[deviceID] { clock.observeOwn(own) }  // its next writes must not be taken for adopted ones
        var changed: Set<String> = []
        for device in Set(upTo.keys).union(adoptedUpTo.keys) where upTo[device] != adoptedUpTo[device] {
            let before = adoptedUpTo[device]
            adoptedUpTo[device] = upTo[device]
            if let time = upTo[device], before.map({ time > $0 }) ?? true {
                changed.formUnion(merged.forget(recordsIn: device, upTo: time))
            } else {
                changed.formUnion(reread(device))
            }
        }
        return noteVisibleChanges(changed)
    }

    /// Every other device this one knows of: with a folder here, read before
    /// (``remembered``), or adopted by some folder. Called with the lock held.
    var knownDevices: Set<DeviceID> {
        Set(sync.devices()).union(readers.keys).union(merged.folders.keys).union(remembered.keys)
            .union(adoptions.values.flatMap(\.keys)).subtracting([deviceID])
    }

    /// Whether `device` was retired and nothing it wrote since was read here: nobody waits for it any more.
    func isRetired(_ device: DeviceID) -> Bool {
        adoptions.values.contains { $0[device]?.retired == true } && (merged.folders[device] ?? [:]).isEmpty
    }

    /// Reads a device's folder again from its beginning. Called with the lock held.
    private func reread(_ device: DeviceID) -> Set<String> {
        guard device == deviceID || sync.devices().contains(device) else { return [] }
        let reader = DeviceFolderReader(device: device, folder: sync.folder(of: device), warn: warningHandler)
        readers[device] = reader
        var batch = reader.readNew()
        batch.replacesAll = true
        return merge(batch, from: device)
    }

    /// Publishes what this device's folder adopted. Called with the lock held.
    func publishOwnAdoptions() {
        guard let own = adoptions[deviceID], !own.isEmpty else { return }
        do {
            try sync.publish(own, of: deviceID)
        } catch {
            warningHandler("cannot publish \(Adoption.fileName): \(error)")
        }
    }
}
