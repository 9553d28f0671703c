import Foundation
import LinuxSystem
import Synchronization

/// Compacts this device's journal into a snapshot of what its folder keeps
/// (``snapshot(of:adding:)``), so that the folder holds every record at
/// every moment and no fsync holds the store's lock.
///
/// A compaction goes in three steps:
/// 1. under the store's lock, it takes what the snapshot keeps and moves the
///    journal to a new segment (``JournalWriter/beginCompaction(_:copying:stamp:)``),
///    so that writes go on at once;
/// 2. without that lock, it makes the old segment durable, reads the older
///    versions history keeps from the old files, writes the snapshot
///    (fsync'ed), tells history where its records now lie, and removes the
///    files the snapshot stands for;
/// 3. it is done, or, when the snapshot found no room (a full disk),
///    unfinished: done again in place with what the store holds then (its
///    removals since make it smaller) before each append, every second and
///    at close, until it is. This device's writes meanwhile go to the new
///    segment, which readers follow at once: the old one ends with a close
///    mark (``JournalWriter/beginCompaction(_:copying:stamp:)``).
///
/// Its phase, and the device's compaction lock (``StateDirectory``: the
/// device's processes compact one at a time), are held from the first step
/// to the last, so that one compaction runs at a time and whoever needs the
/// old segment durable waits for it (``waitUntilIdle()``); writes never wait
/// for it. They are taken before the process's turn at the journal
/// (``OwnJournal``) and the store's lock, never while those are held:
/// ``EngineState`` cannot reach them.
final class Compactor: Sendable {
    /// Where compaction stands between two compactions.
    private enum Phase {
        /// The last compaction is done, or none ran.
        case idle
        /// The last compaction's snapshot could not be written: the next one
        /// replaces it (``JournalWriter/resnapshot(_:copying:stamp:replacing:)``).
        case unfinished(JournalWriter.Compaction)
    }

    /// What a snapshot holds besides this device's own records.
    struct Additions: Sendable {
        /// Records of a retired or vanished device, with their stamps.
        var adopted: [JournalRecord] = []
        /// Adopted records stamped too far ahead to merge yet.
        var waiting: [JournalRecord] = []
        /// Older versions of a retired or vanished device that history keeps, copied from its files.
        var history: [StoredRecord] = []
        /// Whether the snapshot keeps the versions history keeps; false when
        /// a full disk needs their room (for the write that found it full,
        /// or for a snapshot that found no room, done again).
        var keepsHistory = true
    }

    /// How a compaction ended.
    enum Outcome: Sendable {
        /// None was needed, or the store is closed.
        case notNeeded
        /// It could not start (the log says why).
        case failed
        /// Its snapshot could not be written (the log says so once): it is done again later.
        case unfinished
        /// Its snapshot, closed by `stamp`, is the folder's snapshot `generation`.
        case written(stamp: HLCTimestamp, generation: UInt64)
    }

    private let phase = Mutex(Phase.idle)
    /// Where compactions that writes made due run (``inBackground(_:)``), off the writing thread.
    private let lane: any BackgroundLane
    /// Whether a compaction is queued and has not started: more writes need not queue another.
    private let queued = Atomic(false)
    /// Held for a whole compaction, so that the device's processes compact
    /// one at a time (nil for a store opened read-only). Taken with the phase
    /// held, which orders this process's threads (a flock does not).
    private let lock: FileLock?
    /// The device's journal, whose turn a compaction's first step takes before the store's lock.
    private let journal: OwnJournal
    private let warn: @Sendable (String) -> Void

    init(lock: FileLock?, journal: OwnJournal, lane: any BackgroundLane, warn: @escaping @Sendable (String) -> Void) {
        self.lock = lock
        self.journal = journal
        self.lane = lane
        self.warn = warn
    }

    /// Runs `compaction` (``compactIfDue(_:)``, as the store calls it) on
    /// the compactor's lane, unless one is queued already: the write that
    /// made a compaction due returns before its snapshot is written, with
    /// its fsyncs, and so do the writes that follow it.
    func inBackground(_ compaction: @escaping @Sendable () -> Void) {
        guard !queued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        lane.run(after: .zero) { [self] in
            queued.store(false, ordering: .releasing)
            compaction()
        }
    }

    /// Returns once the compaction queued, if any, has run (unless this is
    /// it: the store's last reference went in it): at close, so that a
    /// program that ends right after its writes leaves its journal compacted as they made due.
    func drain() {
        lane.drain()
    }

    /// Compacts now, after the compaction being written, if any (in place of
    /// an unfinished one), by this process or another of the device's.
    /// `adding` runs under the store's lock as the compaction starts: what
    /// its snapshot holds besides this device's records, or nil for no compaction.
    @discardableResult
    func compact(_ engine: borrowing Mutex<EngineState>,
                 adding additions: (inout EngineState) -> Additions? = { _ in Additions() }) -> Outcome {
        phase.withLock { phase in holdingLock(waiting: true) { run(engine, &phase, additions) } ?? .failed }
    }

    /// Compacts if the journal has grown enough since its snapshot, unless a
    /// compaction is being written (by this process or another of the
    /// device's): after a write made it due, on the compactor's lane (``inBackground(_:)``).
    func compactIfDue(_ engine: borrowing Mutex<EngineState>) {
        phase.withLockIfAvailable { phase in
            _ = holdingLock(waiting: false) { run(engine, &phase) { state in state.own.withLock { $0.writer.shouldCompact } ? Additions() : nil } }
        }
    }

    /// Does an unfinished compaction again, unless a compaction is being
    /// written: before each append (the room must go to the snapshot first,
    /// or the old files it would remove keep the disk full) and every second.
    func retryUnfinished(_ engine: borrowing Mutex<EngineState>) {
        phase.withLockIfAvailable { phase in
            guard case .unfinished = phase else { return }
            _ = holdingLock(waiting: false) { run(engine, &phase) { _ in Additions() } }
        }
    }

    /// Waits for the compaction being written, then does an unfinished one
    /// again: at close, the last chance for the snapshot this run.
    func finish(_ engine: borrowing Mutex<EngineState>) {
        phase.withLock { phase in
            guard case .unfinished = phase else { return }
            _ = holdingLock(waiting: true) { run(engine, &phase) { _ in Additions() } }
        }
    }

    /// Runs `body` while no compaction runs, in this process or another of the device's.
    func whileIdle(_ body: () -> Void) {
        phase.withLock { _ in _ = holdingLock(waiting: true, body) }
    }

    /// Runs `body` holding the device's compaction lock, `waiting` for
    /// another process's compaction or not; nil when it was not taken.
    private func holdingLock<T>(waiting: Bool, _ body: () -> T) -> T? {
        guard let lock else { return body() }
        if waiting {
            guard (try? lock.lock()) != nil else { return nil }
        } else {
            guard lock.tryLock() else { return nil }
        }
        defer { lock.unlock() }
        return body()
    }

    /// Returns once no compaction is queued or being written: the segment it
    /// retired and its snapshot are durable then, unless it is unfinished.
    func waitUntilIdle() {
        drain()
        phase.withLock { _ in }
    }

    /// What a snapshot keeps: in memory (`merged`, what the merge takes for
    /// the folder, and `written`, which adds the records of the folder held
    /// back for their stamps) and copied from the folders' files (`copied`).
    struct Snapshot {
        var merged: [JournalRecord], written: [JournalRecord], copied: [StoredRecord]
    }

    /// What a snapshot of this device's folder keeps, with the records
    /// `extra` adopts. Of each key, newest first, its records are kept:
    /// - the current value (the folder's record that wins the key), always;
    /// - a winning removal, unless ``TombstoneCollection`` lets it go and
    ///   the retention no longer keeps it;
    /// - any other record (beaten by another folder's, or older than the
    ///   folder's newest) while the retention keeps it (``RetentionRule``);
    ///
    /// and once one is left out, every older one of that key goes with it,
    /// so that an older value never becomes the folder's newest and comes
    /// back. With history off, that is the folder's winning records less
    /// the collectable tombstones. A kept record that is the folder's newest
    /// of its key is in memory; an older one is copied from the files when
    /// the snapshot is written.
    static func snapshot(of state: inout EngineState, adding extra: Additions) -> Snapshot {
        let device = state.deviceID
        let floor = extra.keepsHistory ? state.retentionFloor() : .none
        let collectable = collectableTombstones(of: state)
        let heldBack = Set(state.folders.heldBack.records(of: device).map(\.stamp))  // written after the others
        let horizon = state.clock.horizon()  // this device's own records past it were rewritten: their old stamps go
        let newest = state.merged.folders[device] ?? [:]
        var merged: [JournalRecord] = [], copied: [StoredRecord] = []
        for (key, versions) in state.history.versions(in: device) {
            let winner = state.merged.winners[key]?.stamp
            for version in versions.reversed() where !heldBack.contains(version.stamp) && version.stamp.time <= horizon {
                let kept = if version.stamp != winner {
                    floor.keeps(version.stamp)
                } else {
                    !version.isRemoval || !collectable.contains(key) || floor.keeps(version.stamp)
                }
                guard kept else { break }  // and every older one with it
                if let latest = newest[key], latest.stamp == version.stamp {
                    merged.append(MergedState.record(key, latest))
                } else {
                    copied.append(StoredRecord(key: key, stamp: version.stamp, folder: state.sync.folder(of: device), location: version.location))
                }
            }
        }
        merged += extra.adopted
        return Snapshot(merged: merged, written: merged + state.folders.heldBack.records(of: device) + extra.waiting,
                        copied: copied + (extra.keepsHistory ? extra.history : []))
    }

    /// The keys whose winning removal in this device's folder
    /// ``TombstoneCollection`` lets go: every device has read it, and no
    /// folder holds an older value of the key.
    private static func collectableTombstones(of state: EngineState) -> Set<StoreKey> {
        let device = state.deviceID
        let tombstones = state.merged.records(inFolder: device).compactMap { record -> (key: StoreKey, readFrom: HLCTimestamp)? in
            guard case let .remove(key) = record.operation else { return nil }
            if record.stamp.device == device { return (key, record.stamp.time) }
            return (state.folders.adoptions[device]?[record.stamp.device]?.at).map { (key, $0) }  // an adopted one
        }
        // Every device known, a vanished one's included (its folder may come back), but a retired one.
        let peers = state.knownDevices.filter { !state.isRetired($0) }.map { peer in
            TombstoneCollection.Peer(progress: state.sync.progress(of: peer), readUpTo: state.folders.mergedUpTo(peer),
                                     newest: state.merged.folders[peer] ?? [:])
        }
        return TombstoneCollection.collectable(tombstones, of: device, latest: state.own.latest, peers: peers)
    }

    /// How the first step went.
    private enum Beginning: Sendable {
        case notNeeded, failed
        case started(JournalWriter.Compaction, stamp: HLCTimestamp, generation: UInt64)
    }

    /// One compaction, its phase held. Once its snapshot is written, what
    /// it held in memory (every record the snapshot keeps, history's older
    /// versions among them, and their frames: tens of megabytes with a full
    /// history of small values) goes back to the system, instead of staying
    /// in the daemon's resident size until the next compaction.
    private func run(_ engine: borrowing Mutex<EngineState>, _ phase: inout Phase,
                     _ additions: (inout EngineState) -> Additions?) -> Outcome {
        let outcome = runSteps(engine, &phase, additions)
        if case .written = outcome { Heap.returnFreedMemory() }
        return outcome
    }

    /// One compaction, its phase held: the three steps.
    private func runSteps(_ engine: borrowing Mutex<EngineState>, _ phase: inout Phase,
                          _ additions: (inout EngineState) -> Additions?) -> Outcome {
        let unfinished: JournalWriter.Compaction? = if case let .unfinished(compaction) = phase { compaction } else { nil }
        // In this process's turn at the journal, once what the device's other processes appended is read:
        // the snapshot holds every record of the device, and the new segment comes after all of them.
        let beginning: Beginning
        do throws(KVStoreError) {
            beginning = try journal.take { kept throws(KVStoreError) -> Beginning in
                try engine.withLock { state throws(KVStoreError) -> Beginning in
                    guard !state.isClosed, !state.own.withLock({ $0.writer.isDisplaced }) else { return .notNeeded }
                    // The sync directory may hold another store since the last refresh (an account change): a compaction
                    // would make this device's folder there again, holding the old store's records, which the refresh that
                    // takes the new store would then read as its content. That refresh comes first.
                    guard !state.isAnotherStore(state.sync.storeID()) else { return .notNeeded }
                    if !kept { try state.followOtherProcesses() }
                    guard var extra = additions(&state) else { return .notNeeded }
                    if unfinished != nil { extra.keepsHistory = false }  // the disk was full: its room goes to the snapshot, not to history
                    return begin(&state, adding: extra, replacing: unfinished)
                }
            }
        } catch {
            warn("compaction failed, the journal keeps growing: \(error)")
            return .failed
        }
        guard case let .started(compaction, stamp, generation) = beginning else {
            if case .notNeeded = beginning { return .notNeeded }
            return .failed
        }
        do throws(KVStoreError) {
            let located = try compaction.finish()
            engine.withLock { state in
                state.history.replaceSnapshot(of: state.deviceID, generation: generation, with: located)
                state.own.withLock { $0.wroteSnapshot(generation, of: compaction.folder.path) }
                state.ownSealedUnder = SealedEpochs()  // and this process's appends before it with them
            }
            phase = .idle
            return .written(stamp: stamp, generation: generation)
        } catch {
            if journal.folder.withLock({ $0.writer.isDisplaced }) {
                // A copy of this state directory took the folder: its files are not this process's to replace.
                warn("compacting the journal stopped: \(error)")
                phase = .idle
                return .failed
            }
            if case .idle = phase {
                warn("compacting the journal could not write its snapshot (\(error)); the journal goes on in its next segment, which other devices read, and kvfs tries again every second")
            }
            phase = .unfinished(compaction)
            return .unfinished
        }
    }

    /// The first step, under the store's lock: the snapshot's records taken,
    /// the journal moved to a new segment (or, in place of an unfinished
    /// compaction, kept on the one it moved to), and the merge told that the
    /// folder holds what the snapshot keeps.
    private func begin(_ state: inout EngineState, adding extra: Additions, replacing unfinished: JournalWriter.Compaction?) -> Beginning {
        let snapshot = Self.snapshot(of: &state, adding: extra)
        do throws(KVStoreError) {
            let stamp = Stamp(time: try state.clock.now(), device: state.deviceID)
            let (compaction, generation) = try state.own.withLock { folder throws(KVStoreError) in
                let compaction = if let unfinished {
                    try folder.writer.resnapshot(snapshot.written, copying: snapshot.copied, stamp: stamp, replacing: unfinished)
                } else {
                    try folder.beginCompaction(snapshot.written, copying: snapshot.copied, stamp: stamp)
                }
                folder.latest = stamp.time
                return (compaction, folder.writer.generation)
            }
            _ = state.noteVisibleChanges(state.merged.replace(recordsIn: state.deviceID, with: snapshot.merged))
            return .started(compaction, stamp: stamp.time, generation: generation)
        } catch {
            warn("compaction failed, the journal keeps growing: \(error)")
            return .failed
        }
    }
}
