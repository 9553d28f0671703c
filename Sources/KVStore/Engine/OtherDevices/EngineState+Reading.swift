import Foundation

/// Reading the device folders, and saying how far this device has read them.
extension EngineState {
    /// Reads every folder's new records (this device's own: what its other
    /// processes appended), and applies the adoptions the folders publish. Returns the keys whose visible entry changed, and
    /// the devices whose folders vanished without anyone retiring them: the
    /// store keeps what they held (``DeviceStore/adoptVanished(_:)``) once it
    /// has let go of the lock, for that takes a compaction. A refresh does
    /// the same folder by folder (``DeviceStore/refresh(onlyChangedFolders:)``).
    mutating func readFolders() -> (changed: Set<StoreKey>, vanished: [DeviceID]) {
        let present = sync.devices()
        var changed = releaseHeldBack()
        for device in present { changed.formUnion(read(device)) }
        return finishReading(present: present, changed: changed)
    }

    /// Reads a device's new records, and what its folder says it adopted:
    /// another device's through its reader in the folders' view, this
    /// device's own through its own journal (what its other processes
    /// appended: ``readOwnFolder()``). `seen` is the folder as a survey saw it just now, if one
    /// did: the name it gives its device is the one in force (a device
    /// renamed with `--device-name` is shown by its new name here too); with
    /// `onlyIfChanged`, the folder is read only when it changed since its
    /// reader last read it. Returns the keys whose visible entry changed.
    mutating func read(_ device: DeviceID, seen: FolderSurvey.Seen? = nil, onlyIfChanged: Bool = false) -> Set<StoreKey> {
        guard !isClosed else { return [] }
        if let name = seen?.name { folders.rename(device, to: name) }
        if device == deviceID { return readOwnFolder() }
        let known = folders.readers[device]
        if onlyIfChanged, let seen, known?.readAt == seen.fingerprint { return [] }
        if folders.names[device] == nil { _ = displayName(of: device) }  // remembered, should its folder go
        let reader = known ?? DeviceFolderReader(device: device, folder: sync.folder(of: device), warn: context.warn)
        folders.readers[device] = reader
        reader.readAt = seen?.fingerprint
        let adopted = sync.adoptions(of: device)
        folders.adoptions[device] = adopted.isEmpty ? nil : adopted
        return merge(reader.readNew(), from: device)
    }

    /// Ends a reading of the folders `present`, which changed `changed`:
    /// applies the adoptions, and finds the folders that vanished.
    mutating func finishReading(present: [DeviceID], changed: Set<StoreKey>) -> (changed: Set<StoreKey>, vanished: [DeviceID]) {
        retentionRead = nil  // a device may have set another retention since: read again when next asked
        var changed = changed
        changed.formUnion(applyAdoptions())  // first: what another device adopted needs no keeping here
        let presentSet = Set(present)  // a lookup per reader: an array's contains made each refresh n²
        let vanished = folders.readers.keys.filter { !presentSet.contains($0) && sync.hasRemovedFolder(of: $0) }
        noteSupersededKeys()
        return (changed, vanished)
    }

    /// Merges what a reader found in `device`'s folder, moving the clock
    /// past it, less what is stamped too far ahead (``admit(_:from:)``) and
    /// what that folder holds of its records that another folder adopted;
    /// returns the keys whose visible entry changed.
    mutating func merge(_ batch: DeviceFolderReader.Batch, from device: DeviceID) -> Set<StoreKey> {
        history.take(batch, from: device)
        var records = admit(batch, from: device)
        if let adopted = folders.adoptedUpTo[device] { records.removeAll { $0.stamp.time <= adopted } }
        return noteVisibleChanges(batch.replacesAll ? merged.replace(recordsIn: device, with: records)
                                                    : merged.apply(records, in: device))
    }

    /// Takes up what this device noted of itself in its state directory
    /// (`lastOwnStamp`), and what it said when it last published its progress.
    /// Its clock moves past everything it wrote (records adopted from it,
    /// should its folder have vanished, are ignored in its folder up to where
    /// they were read, so its next writes must come after them) and
    /// everything it had read: other devices may have dropped tombstones on
    /// the strength of it (``TombstoneCollection``), so its next writes must
    /// come after them even if the folders it read are gone or not here yet.
    /// And it still knows the devices it had read whose folders are not here now (``remembered``).
    mutating func observePublishedProgress(lastOwnStamp: HLCTimestamp?) {
        if let lastOwnStamp { clock.observe(lastOwnStamp) }  // its folder may be gone, and adopted by others
        guard let progress = sync.progress(of: deviceID) else { return }
        for time in progress.read.values { clock.observe(time) }
        folders.remembered = progress.read.filter { $0.key != deviceID }
    }

    /// How far this device has read every other one it knows, as its
    /// progress file says it (``ProgressPublisher``); nil when it publishes
    /// nothing (opened read-only, or another process took its folder).
    func readProgress(closing: Bool = false) -> ReadProgress? {
        guard !context.isReadOnly, let latest = own.withLock({ $0.writer.isDisplaced ? nil : Optional($0.latest) }) else { return nil }
        var read = folders.remembered.filter { folders.readers[$0.key] == nil && !isRetired($0.key) }
        for device in folders.readers.keys { read[device] = folders.mergedUpTo(device) ?? ReadProgress.nothing }
        return ReadProgress(own: latest, read: read, closed: closing)
    }

    /// What changed while this device was away, against what it showed when
    /// it closed (`seen`): the keys whose visible entry another device
    /// changed (its own writes are not news to it), and the keys newly set
    /// aside. Counts as the first sync.
    mutating func changedSince(_ seen: (visible: [StoreKey: Stamp], setAside: [StoreKey: Stamp])) -> (changed: [StoreKey], setAside: [StoreKey]) {
        folders.lastSyncTime = Date()
        let shown = Set(seen.visible.keys).union(merged.visible.keys)
        let changed = shown.filter { key in
            let entry = merged.visible[key]
            return entry?.stamp != seen.visible[key] && entry?.stamp.device != deviceID
        }
        return (Array(changed), merged.setAside.filter { merged.winners[$0]?.stamp != seen.setAside[$0] })
    }
}
