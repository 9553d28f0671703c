import Foundation
import Synchronization
@testable import KVStore

/// Collects a store's warnings, to check that a foreign file was noticed.
final class Warnings: Sendable {
    private let messages = Mutex<[String]>([])

    var all: [String] { messages.withLock { $0 } }

    func add(_ message: String) { messages.withLock { $0.append(message) } }

    /// Whether some warning contains `text`.
    func contain(_ text: String) -> Bool { all.contains { $0.contains(text) } }
}

/// A test's folders: sync directories and state directories under one temporary root.
struct SyncFixture {
    let root = TemporaryFolder("kvfs-sync", inMemory: true)
    let warnings = Warnings()
    /// The history retention each store opened sets (nil: the store's own);
    /// `.off` for tests of what compaction drops when no history is kept.
    var retention: HistoryRetention?

    /// A store on `root/<sync>` as device `name` (its state in `root/state-<name>`).
    func open(_ name: String, sync: String = "sync", clock: HybridLogicalClock = HybridLogicalClock(),
              compactionFloor: Int? = nil) throws -> DeviceStore {
        TestSealing.installIfAsked()
        let store = try DeviceStore(syncDirectory: URL(fileURLWithPath: root.path + "/" + sync),
                                    stateDirectory: URL(fileURLWithPath: root.path + "/state-" + name),
                                    deviceName: name, clock: clock, warn: warnings.add)
        if let compactionFloor { store.journal.folder.withLock { $0.writer.compactionFloor = compactionFloor } }
        if let retention { try store.setRetention(retention) }
        return store
    }

    /// The folder `store` writes.
    func folder(of store: DeviceStore, sync: String = "sync") -> String {
        root.path + "/" + sync + "/devices/" + store.deviceID.hex
    }

    func cleanup() { root.cleanup() }
}

/// The framed bytes of records, as a journal holds them.
func frames(_ records: [JournalRecord]) -> [UInt8] { records.flatMap(RecordFrame.encode) }

/// A record stamped by `device` at `milliseconds`.
func record(_ device: DeviceID, _ milliseconds: UInt64, _ operation: JournalRecord.Operation) -> JournalRecord {
    JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: milliseconds, counter: 0), device: device), operation: operation)
}

/// Appends bytes to a file, creating it (and its folder).
func append(_ bytes: [UInt8], to path: String) throws {
    try Files.makeDirectory((path as NSString).deletingLastPathComponent)
    if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
    let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? file.close() }
    try file.seekToEnd()
    try file.write(contentsOf: bytes)
}

/// Copies a folder's files to another folder (replacing what is there), as a synchronizer would.
func copyFolder(_ from: String, to: String) throws {
    try Files.makeDirectory(to)
    for name in Files.list(to) where !Files.list(from).contains(name) { unlink(to + "/" + name) }
    for name in Files.list(from) {
        guard let bytes = try Files.read(from + "/" + name) else { continue }
        try Files.writeAtomically(to + "/" + name, bytes)
    }
}

extension DeviceStore {
    /// Reaches a sync point now, as the store's signing schedule does within 2 ms of its last write
    /// (docs/sealed.md § Signing at sync points): in a sealed store its writes are signed, and other
    /// devices read them from then on; a plain store has nothing to do. Tests call it where another
    /// device reads at once what this one wrote.
    func reachSyncPoint() { signAppends(waiting: true) }

    /// Reads the other devices' new records once each of `writers` has reached a sync point (``reachSyncPoint()``).
    @discardableResult
    func refresh(after writers: DeviceStore...) -> StoreChange? {
        for writer in writers { writer.reachSyncPoint() }
        return refresh()
    }
}
