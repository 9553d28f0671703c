import Synchronization

/// This device's own folder, as one process of the device has it (the part
/// of ``OwnJournal`` the engine reaches): the writer that appends to it, the
/// reader of what the device's other processes append there, what they
/// appended that this one read meanwhile, and how far the folder goes. The
/// reader is this type's alone: the other devices' readers are the folders'
/// view's (``FolderView``), and this process's own appends and compactions
/// move it past what they wrote, so it never reads them back.
///
/// Its lock is taken inside the engine's (``EngineState`` holds this, not
/// the ``OwnJournal`` it is part of, so it cannot reach the journal's turn),
/// for as long as an append or a read of the folder lasts, and nothing is
/// taken inside it.
final class OwnFolder: Sendable {
    private let state: Mutex<State>

    init(_ state: sending State) {
        self.state = Mutex(state)
    }

    /// Runs `body` with the folder's parts, this process's other threads kept out.
    func withLock<T, E: Error>(_ body: (inout sending State) throws(E) -> sending T) throws(E) -> sending T {
        try state.withLock(body)
    }

    /// The latest stamp in this device's own folder: what its progress calls `own`.
    var latest: HLCTimestamp? {
        get { state.withLock { $0.latest } }
        set { state.withLock { $0.latest = newValue } }
    }

    /// The folder's parts.
    struct State {
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
        /// What the store's opening refused in the folder and cut off (another member's unsigned record
        /// at its end: docs/sealed.md § Signing at sync points): the status names it for the run.
        var refusedAtOpen: [SyncWarning] = []

        /// Appends `records` in one write(2), and moves the reader past them: it
        /// need not read again what this process wrote. Returns where each record lies.
        mutating func append(_ records: [JournalRecord]) throws(KVStoreError) -> [RecordLocation] {
            let locations = try writer.append(records)
            latest = records.last?.stamp.time ?? latest
            if let latest { reader.follow(writer, latest: latest) }
            return locations
        }

        /// In a sealed store, signs the segment's unsigned records with a mark (``JournalWriter/sign()``),
        /// and moves the reader past it. Returns whether it wrote a mark.
        @discardableResult
        mutating func sign() throws(KVStoreError) -> Bool {
            guard writer.hasUnsignedTail else { return false }
            try writer.sign()
            if let latest { reader.follow(writer, latest: latest) }
            return true
        }

        /// In a sealed store, whether the folder ends with records no mark signs yet, as far as this
        /// process knows: its own appends, or what it read of the device's other processes'.
        var hasUnsignedTail: Bool { writer.hasUnsignedTail || reader.tailChain?.isSigned == false }

        /// Begins a compaction (``JournalWriter/beginCompaction(_:copying:stamp:)``):
        /// the segment closed, appends going to the next one from now on, and
        /// the reader with them.
        mutating func beginCompaction(_ current: [JournalRecord], copying copied: [StoredRecord], stamp: Stamp) throws(KVStoreError) -> JournalWriter.Compaction {
            let compaction = try writer.beginCompaction(current, copying: copied, stamp: stamp)
            latest = stamp.time
            reader.follow(writer, latest: stamp.time)
            reader.writing(snapshot: writer.generation)
            return compaction
        }

        /// Notes that this process's compaction wrote snapshot `generation` of
        /// the folder at `path`: the reader takes it as read (unless the folder
        /// is another since, after an account change).
        mutating func wroteSnapshot(_ generation: UInt64, of path: String) {
            if reader.folder.path == path { reader.wrote(snapshot: generation) }
        }

        /// Whether the device's other processes wrote nothing that the reader has not read
        /// (``JournalWriter/holdsNothingNew(past:)``).
        var holdsNothingNew: Bool { writer.holdsNothingNew(past: reader) }

        /// Moves the writer to where the reader found the device's other processes left the journal.
        mutating func followOtherProcesses() throws(KVStoreError) {
            try writer.follow(reader)
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

        /// The status's warning of this device's records stamped ahead, if any.
        func aheadWarning(device: DeviceID) -> SyncWarning? {
            ahead.warning(device: device, folder: writer.folder.path)
        }
    }

    /// What the device's other processes wrote, as this one found it while appending.
    struct OtherProcessesWrites {
        /// The keys whose visible entry changed.
        var changed: Set<StoreKey> = []
        /// The keys the quota rule newly set aside.
        var setAside: Set<StoreKey> = []
    }
}
