import Foundation
import Synchronization
import Testing
@testable import KVStore

/// The device's journal is taken in turns (``OwnJournal``): another process
/// holding `journal.lock` holds up, at most, this process's writes, never
/// its reads, and whatever re-opens the journal waits for that process's append.
@Suite("Turns at the journal")
struct JournalTurnTests {
    let fixture = SyncFixture()

    /// `journal.lock` of device `name`'s state directory, opened apart from
    /// the stores': taken, it is another process of the device in its turn.
    private func journalLock(of name: String) throws -> FileLock {
        let folder = try #require(try Folder.open(fixture.root.path + "/state-" + name))
        return try #require(try FileLock("journal.lock", in: folder))
    }

    /// Runs `body` on a thread of its own; the semaphore is signalled once it returns.
    private func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread { body(); done.signal() }.start()
        return done
    }

    @Test("while another process keeps the journal, reads go on; a write waits for it without the store's lock, and then fails, naming it, with nothing written")
    func readsDoNotWaitForAnotherProcessesTurn() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        a.journal.patience = .seconds(2)
        let other = try journalLock(of: "a")
        try other.lock()
        let result = Mutex<Result<Void, KVStoreError>?>(nil)
        let writing = onThread {
            do throws(KVStoreError) {
                try a.set(.integer(2), forKey: "k")
                result.withLock { $0 = .success(()) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
        }
        usleep(200_000)  // the write is waiting for the other process
        let reading = onThread { _ = a.entry(forKey: "k"); _ = a.values; _ = a.status() }
        #expect(reading.wait(timeout: .now() + 1) == .success, "a read waited for another process's turn at the journal")
        #expect(result.withLock { $0 } == nil, "the write did not wait")
        _ = writing.wait(timeout: .now() + 10)
        other.unlock()
        guard case let .failure(error)? = result.withLock({ $0 }), case let .journalBusy(path, holder, seconds) = error else {
            Issue.record("the write did not fail as busy: \(String(describing: result.withLock { $0 }))")
            return
        }
        #expect(path.hasSuffix("/state-a/journal.lock") && seconds == 2)
        #expect(holder.hasPrefix("pid \(getpid()) ("), "\(holder)")  // this test is the other process
        #expect(fixture.warnings.contain("a write of 'k' was refused: cannot append to this device's journal: pid \(getpid())"))
        #expect(a.entry(forKey: "k")?.value == .integer(1), "the refused write changed the value")
        try a.set(.integer(3), forKey: "k")  // its turn, once the other lets go
        let fresh = try fixture.open("reader")
        defer { fresh.close() }
        #expect(fresh.entry(forKey: "k")?.value == .integer(3))
    }

    @Test("re-opening the journal for another store's folder waits for the record another process of the device is appending, and loses none of it")
    func anotherStoreWaitsForAnAppend() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "x")
        let folder = fixture.folder(of: a)
        let segment = try #require(DeviceFolder(path: folder).listing().segments.last)
        let segmentPath = DeviceFolder(path: folder).segmentPath(segment)
        // Another process of the device, in the middle of its append: it holds the journal's lock, half its record written.
        let other = try journalLock(of: "a")
        try other.lock()
        let frame = RecordFrame.encode(JournalRecord(stamp: Stamp(time: try a.context.clock.now(), device: a.deviceID),
                                                     operation: .put(key: "y", value: .integer(2))))
        try append(Array(frame.prefix(frame.count / 2)), to: segmentPath)
        try Files.writeAtomically(fixture.root.path + "/sync/store-id", Array("another-store\n".utf8))
        let refreshed = onThread { a.refresh() }
        usleep(300_000)
        try append(Array(frame.dropFirst(frame.count / 2)), to: segmentPath)
        other.unlock()
        #expect(refreshed.wait(timeout: .now() + 10) == .success)
        #expect(a.storeID == "another-store")
        #expect(a.entry(forKey: "y")?.value == .integer(2), "the other process's record was lost")
        let reader = DeviceFolderReader(device: a.deviceID, folder: DeviceFolder(path: folder), ownFolder: true, warn: { _ in })
        let records = reader.readNew().records
        #expect(reader.problems.isEmpty, "\(reader.problems)")
        #expect(records.map(\.operation).contains(.put(key: "y", value: .integer(2))))
    }
}
