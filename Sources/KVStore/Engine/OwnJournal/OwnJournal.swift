/// This device's own journal, as one process of the device sees it: the
/// writer that appends to its folder (in this process's turn,
/// ``JournalTurn``), the reader of what the device's other processes append
/// there, what they appended that this one read meanwhile, and how far the
/// folder goes. The reader is this type's alone: the other devices' readers
/// are the folders' view's (``FolderView``), and this process's own appends
/// and compactions move it past what they wrote, so it never reads them back.
///
/// One of ``EngineState``'s two parts, beside the folders' view
/// (``FolderView``); it lives inside the engine's `Mutex` with them.
struct OwnJournal {
    /// Appends this device's records to its folder.
    var writer: JournalWriter
    /// Reads what the device's other processes write to its folder (their
    /// appends, their compactions); moved past this process's own.
    var reader: DeviceFolderReader
    /// What the device's other processes wrote that this one read while
    /// appending, for the store to report once it lets go of the engine's lock.
    var fromOtherProcesses = OtherProcessesWrites()
    /// This device's own records stamped too far ahead of its clock, to be rewritten.
    var ahead = OwnRecordsAhead()
    /// The latest stamp in this device's own folder: what its progress calls `own`.
    var latest: HLCTimestamp?

    /// What the device's other processes wrote, as this one found it while appending.
    struct OtherProcessesWrites {
        /// The keys whose visible entry changed.
        var changed: Set<StoreKey> = []
        /// The keys the quota rule newly set aside.
        var setAside: Set<StoreKey> = []
    }

    /// Appends `records` in one write(2), and moves the reader past them: it
    /// need not read again what this process wrote. Returns where each record lies.
    mutating func append(_ records: [JournalRecord]) throws(KVStoreError) -> [RecordLocation] {
        let locations = try writer.append(records)
        latest = records.last?.stamp.time ?? latest
        if let latest { reader.follow(writer, latest: latest) }
        return locations
    }

    /// Begins a compaction (``JournalWriter/beginCompaction(_:copying:stamp:)``):
    /// the segment closed, appends going to the next one from now on, and
    /// the reader with them.
    mutating func beginCompaction(_ current: [JournalRecord], copying copied: [StoredRecord], stamp: Stamp) throws(KVStoreError) -> JournalWriter.Compaction {
        let compaction = try writer.beginCompaction(current, copying: copied, stamp: stamp)
        latest = stamp.time
        reader.follow(writer, latest: stamp.time)
        return compaction
    }

    /// Notes that this process's compaction wrote snapshot `generation` of
    /// the folder at `path`: the reader takes it as read (unless the folder
    /// is another since, after an account change).
    mutating func wroteSnapshot(_ generation: UInt64, of path: String) {
        if reader.folder.path == path { reader.wrote(snapshot: generation) }
    }

    /// Notes the latest stamp of this device's read in its folder, written by another of its processes.
    mutating func noteRead(_ stamp: HLCTimestamp?) {
        if let stamp { latest = max(latest ?? stamp, stamp) }
    }

    /// What the device's other processes wrote that this one read while appending, forgotten here.
    mutating func takeOtherProcessesWrites() -> OtherProcessesWrites {
        defer { fromOtherProcesses = OtherProcessesWrites() }
        return fromOtherProcesses
    }
}
