/// What this device knows of every version the device folders hold, without
/// their values: per folder, per key, each record's stamp, kind, value size
/// and where the record lies (``RecordLocation``). A version's value is read
/// back from its folder when someone asks for it, so history costs memory
/// in proportion to its number of versions, not to their bytes.
///
/// It follows the folders as their readers do: a reader's batch adds to its
/// folder's versions, or replaces them when it starts with a snapshot (the
/// folder's device compacted); this device's appends and compactions say
/// where their records went. A version in several folders (a record adopted
/// from a retired device, or in both a snapshot and the segment after it) is
/// one version.
struct HistoryIndex {
    /// One version of a key in one folder.
    struct Entry {
        var time: HLCTimestamp
        /// The writer, as its number in ``writers``: a device id is 32
        /// characters, and every version would keep a copy of its own.
        var writer: UInt32
        /// The value's file size; 0 for a removal.
        var size: UInt32
        /// What it counts against the retention's budget (``RetentionRule/charge(key:value:base:rank:)``).
        var charge: UInt32
        var isRemoval: Bool
        var inSnapshot: Bool
        var generation: UInt64
        var offset: Int
        var length: UInt32
        /// What its writer had as the key's current version (``WriteBase``).
        var base: Base

        var location: RecordLocation {
            RecordLocation(generation: generation, inSnapshot: inSnapshot, offset: offset, length: Int(length))
        }
    }

    /// A ``WriteBase`` whose device is a number in ``writers``, as an entry's writer is.
    enum Base {
        case unknown, nothing
        case version(HLCTimestamp, writer: UInt32)
    }

    /// One version of a key: its stamp, kind and size, what its writer had
    /// seen, and a folder that holds its record.
    struct Version: Equatable {
        var stamp: Stamp
        var isRemoval: Bool
        var size: Int
        var base: WriteBase
        var folder: DeviceID
        var location: RecordLocation
    }

    /// The writers of the versions, numbered as they were first met.
    private var writers: [DeviceID] = []
    private var writerNumbers: [DeviceID: UInt32] = [:]
    /// Per folder (by its device), per key, its versions in the order read.
    private var folders: [DeviceID: [StoreKey: [Entry]]] = [:]
    /// Changes with every change of the versions (for ``Cache``).
    private(set) var revision: UInt64 = 0
    /// The last retention floor worked out, and what it was worked out from.
    var cache: Cache?

    /// The budget's part of a retention floor (``RetentionRule/overBudget(_:bytes:)``)
    /// and what it depends on: the versions, the merge's winners (which
    /// versions are current) and the setting.
    struct Cache {
        var revision: UInt64, mergeRevision: UInt64, retention: HistoryRetention, budgetFloor: Stamp?
    }

    // MARK: Following the folders

    /// Takes what a reader found in `folder`: in addition to what it held,
    /// or instead of it when the batch starts with a snapshot.
    mutating func take(_ batch: DeviceFolderReader.Batch, from folder: DeviceID) {
        if batch.replacesAll { folders[folder] = [:] }
        add(zip(batch.records, batch.locations), in: folder)
    }

    /// Adds records and where they lie in `folder` (read there, or appended there by this device).
    mutating func add(_ located: some Sequence<(JournalRecord, RecordLocation)>, in folder: DeviceID) {
        revision &+= 1
        var versions = folders.removeValue(forKey: folder) ?? [:]  // taken out, not copied: it is changed in place
        for (record, location) in located {
            let writer = number(of: record.stamp.device)
            for (key, value, base, rank) in record.changesWithBases {
                let entry = Entry(time: record.stamp.time, writer: writer, size: UInt32(value.map(FileForm.size(of:)) ?? 0),
                                  charge: UInt32(RetentionRule.charge(key: key, value: value, base: base, rank: rank)),
                                  isRemoval: value == nil, inSnapshot: location.inSnapshot, generation: location.generation,
                                  offset: location.offset, length: UInt32(location.length), base: numbered(base))
                versions[key, default: []].insertOnce(entry)
            }
        }
        folders[folder] = versions
    }

    /// Forgets a folder that is no longer read.
    mutating func forget(_ folder: DeviceID) {
        revision &+= 1
        folders[folder] = nil
    }

    /// Forgets every folder (the sync directory now holds another store).
    mutating func forgetAll() {
        revision &+= 1
        folders = [:]
    }

    /// This device's compaction wrote snapshot `generation` of `folder`,
    /// holding `located`: the versions of the files it replaces (older
    /// segments and snapshots) are those now, and the ones appended since to
    /// segment `generation` stay where they are.
    mutating func replaceSnapshot(of folder: DeviceID, generation: UInt64, with located: [(JournalRecord, RecordLocation)]) {
        var versions = folders.removeValue(forKey: folder) ?? [:]  // taken out, not copied: it is changed in place
        for key in Array(versions.keys) {
            let kept = versions[key]!.filter { $0.generation == generation && !$0.inSnapshot || $0.generation > generation }
            versions[key] = kept.isEmpty ? nil : kept
        }
        folders[folder] = versions
        add(located, in: folder)
    }

    private mutating func numbered(_ base: WriteBase) -> Base {
        switch base {
        case .unknown: .unknown
        case .nothing: .nothing
        case let .version(stamp): .version(stamp.time, writer: number(of: stamp.device))
        }
    }

    private func writeBase(_ base: Base) -> WriteBase {
        switch base {
        case .unknown: .unknown
        case .nothing: .nothing
        case let .version(time, writer): .version(Stamp(time: time, device: writers[Int(writer)]))
        }
    }

    private mutating func number(of writer: DeviceID) -> UInt32 {
        if let number = writerNumbers[writer] { return number }
        let number = UInt32(writers.count)
        writers.append(writer)
        writerNumbers[writer] = number
        return number
    }

    // MARK: Asking

    /// Every key with a version in some folder.
    var keys: Set<StoreKey> { Set(folders.values.flatMap(\.keys)) }

    /// The versions of `key`, oldest first, each once: those the folders
    /// hold, less those `hidden` says to pass over (a folder's records a
    /// retirement lets every device ignore).
    func versions(of key: StoreKey, hidden: (DeviceID, HLCTimestamp) -> Bool) -> [Version] {
        var found: [Version] = []
        for (folder, versions) in folders {
            for entry in versions[key] ?? [] where !hidden(folder, entry.time) {
                found.append(Version(stamp: Stamp(time: entry.time, device: writers[Int(entry.writer)]), isRemoval: entry.isRemoval,
                                     size: Int(entry.size), base: writeBase(entry.base), folder: folder, location: entry.location))
            }
        }
        found.sort { $0.stamp < $1.stamp }
        return found.enumerated().compactMap { index, version in
            index > 0 && found[index - 1].stamp == version.stamp ? nil : version
        }
    }

    /// Every version of the store, each once, but those `hidden` passes over,
    /// with their keys and what each counts against the budget: what retention weighs.
    func allVersions(hidden: (DeviceID, HLCTimestamp) -> Bool) -> [(key: StoreKey, stamp: Stamp, isRemoval: Bool, charge: Int)] {
        var found: [(key: StoreKey, stamp: Stamp, isRemoval: Bool, charge: Int)] = []
        for (folder, versions) in folders {
            for (key, entries) in versions {
                for entry in entries where !hidden(folder, entry.time) {
                    found.append((key, Stamp(time: entry.time, device: writers[Int(entry.writer)]), entry.isRemoval, Int(entry.charge)))
                }
            }
        }
        guard folders.count > 1 else { return found }  // one folder holds each version once
        found.sort { $0.stamp != $1.stamp ? $0.stamp < $1.stamp : $0.key < $1.key }
        return found.enumerated().compactMap { index, version in
            index > 0 && found[index - 1].stamp == version.stamp && found[index - 1].key == version.key ? nil : version
        }
    }

    /// The stamps of `key`'s versions in the folders other than `folder`.
    func stamps(of key: StoreKey, outside folder: DeviceID) -> Set<Stamp> {
        var stamps: Set<Stamp> = []
        for (other, versions) in folders where other != folder {
            for entry in versions[key] ?? [] { stamps.insert(Stamp(time: entry.time, device: writers[Int(entry.writer)])) }
        }
        return stamps
    }

    /// The versions of `folder` (its records, as it holds them), per key, oldest first.
    func versions(in folder: DeviceID) -> [StoreKey: [Version]] {
        (folders[folder] ?? [:]).mapValues { entries in
            entries.map { entry in
                Version(stamp: Stamp(time: entry.time, device: writers[Int(entry.writer)]), isRemoval: entry.isRemoval,
                        size: Int(entry.size), base: writeBase(entry.base), folder: folder, location: entry.location)
            }.sorted { $0.stamp < $1.stamp }
        }
    }
}

private extension Array where Element == HistoryIndex.Entry {
    /// Appends `entry` unless the same version is there (read again after a
    /// region still arriving, or in both a snapshot and a segment); then the
    /// later location replaces the earlier one. Records mostly come in stamp
    /// order, so the search stops at the first older one.
    mutating func insertOnce(_ entry: HistoryIndex.Entry) {
        for index in indices.reversed() {
            if self[index].time < entry.time { break }
            if self[index].time == entry.time && self[index].writer == entry.writer {
                self[index] = entry
                return
            }
        }
        append(entry)
    }
}
