import Foundation
import Synchronization
import Testing
@testable import KVStore

/// docs/sealed.md § Signing at sync points: a sealed store's writes are
/// appended unsigned and signed by a mark at the writer's next sync point;
/// other devices read them once it is there, the device's other processes
/// at once; a crash between a write and its mark loses nothing, and an
/// unsigned record another member put in the device's folder is refused,
/// never merged nor signed.
@Suite("Sealed stores: signing at sync points")
struct SealedSigningTests {
    let fixture = SyncFixture()

    init() { TestSealing.seal(fixture.root.path + "/sync") }

    func segment(of store: DeviceStore, _ generation: UInt64 = 1) -> String {
        fixture.folder(of: store) + "/" + DeviceFolder.segmentName(generation)
    }

    /// The flags byte of each sealed frame of a file (docs/format.md § Sealed frames): 0 an unsigned record,
    /// 1 a signed one, 3 a mark.
    func flags(_ path: String) throws -> [UInt8] {
        let bytes = try #require(try Files.read(path))
        var flags: [UInt8] = [], offset = 0
        while offset + RecordFrame.headerSize <= bytes.count {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            guard length >= 2, offset + RecordFrame.headerSize + length <= bytes.count else { break }  // a frame being appended
            flags.append(bytes[offset + RecordFrame.headerSize + 1])
            offset += RecordFrame.headerSize + length
        }
        return flags
    }

    /// Device `name`'s store as a mount opens it, with its watcher: it keeps the journal between its writes
    /// (the lease, from its first write on), and so signs them at sync points rather than as each returns.
    func mounted(_ name: String) throws -> (DeviceStore, SyncWatcher) {
        let store = try DeviceStore(syncDirectory: URL(fileURLWithPath: fixture.root.path + "/sync"),
                                    stateDirectory: URL(fileURLWithPath: fixture.root.path + "/state-" + name),
                                    deviceName: name, owner: "mount /mnt/" + name, warn: fixture.warnings.add)
        return (store, SyncWatcher(store: store, pollInterval: 3600))  // no polling: inotify alone
    }

    /// Stops `store` signing on its own (its schedule and its tick): what it appends stays unsigned until
    /// a sync point it is asked for (`flush()`, close).
    func holdMarks(_ store: DeviceStore) {
        store.signing?.stop()
        store.ticker.stop()
    }

    /// `records` sealed as `store`'s device's next ones at the end of its segment 1, unsigned, as its
    /// writer appends them (`keys`: its own, or another member's forging into its folder).
    func appendUnsigned(_ records: [JournalRecord], to store: DeviceStore, sealedWith keys: SealingKeys) throws {
        let path = segment(of: store)
        let bytes = try #require(try Files.read(path))
        let own = try #require(TestSealing.keys(of: store.deviceID, storeID: store.storeID))
        let origin = RecordChain(storeID: store.storeID, device: store.deviceID, file: SealedFile(kind: .segment, generation: 1))
        let scan = bytes.withUnsafeBytes {
            RecordFrame.scan($0, opener: SealedFileOpener(keys: own, device: store.deviceID, chain: origin, verifiesEach: true, ownFolder: true))
        }
        #expect(scan.resumeOffset == bytes.count)
        var sealer = RecordSealer(keys: keys, chain: try #require(scan.chain))
        var writer = ByteWriter()
        for record in records { sealer.frame(record, signed: false, into: &writer) }
        try Files.writeAtomically(path, bytes + writer.bytes)
    }

    @Test("a program's write and a mount's are appended unsigned and reach another device only with their mark: held back before it, read once a sync point signs it")
    func otherDevicesWaitForTheMark() throws {
        defer { fixture.cleanup() }
        let program = try fixture.open("p"), b = try fixture.open("b")
        defer { program.close(); b.close() }
        holdMarks(program)
        try program.set(.string("marked"), forKey: "p")
        #expect(!program.journal.isLeasedNow)
        #expect(try flags(segment(of: program)).last == 0, "a program's write is appended unsigned too")
        _ = b.refresh()
        #expect(b.value(forKey: "p") == nil, "b read a record no mark signs")
        try program.flush()  // a sync point (synchronize() is one too)
        #expect(try flags(segment(of: program)).suffix(2) == [0, 3])
        _ = b.refresh()
        #expect(b.value(forKey: "p") == .string("marked"))
        let (a, watcher) = try mounted("a")
        defer { watcher.stop(); a.close() }
        holdMarks(a)
        try a.set(.string("first"), forKey: "k")
        #expect(a.journal.isLeasedNow)
        #expect(try flags(segment(of: a)).last == 0, "the write is appended unsigned")
        _ = b.refresh()
        #expect(b.value(forKey: "k") == nil, "b read a record no mark signs")
        try a.flush()  // a sync point
        #expect(try flags(segment(of: a)).suffix(2) == [0, 3])
        _ = b.refresh()
        #expect(b.value(forKey: "k") == .string("first"))
        #expect(!fixture.warnings.contain("refused"))
    }

    @Test("a program's writes are marked by its schedule once it is idle, one mark for a burst; what it left unsigned is signed as it exits")
    func aProgramMarksItsBursts() throws {
        defer { fixture.cleanup() }
        let program = try fixture.open("p"), b = try fixture.open("b")
        defer { program.close(); b.close() }
        for index in 0..<20 { try program.set(.integer(Int64(index)), forKey: StoreKey("k\(index)")) }
        try waitUntil(seconds: 5, "the mark of the burst", every: 0.001) { try flags(segment(of: program)).last == 3 }
        let marked = try flags(segment(of: program))
        #expect(marked.filter { $0 == 0 }.count == 20 && marked.filter { $0 == 3 }.count < 20, "\(marked)")
        _ = b.refresh()
        #expect(b.values.count == 20)
        // The schedule held off (as when the process ends before the idle delay passes): exit signs.
        program.ticker.stop()
        program.signing?.delays = (idle: .seconds(3600), bound: .seconds(3600))
        try program.set(.string("last"), forKey: "last")
        #expect(try flags(segment(of: program)).last == 0)
        SigningSchedule.signAtExit()
        #expect(try flags(segment(of: program)).suffix(2) == [0, 3])
        _ = b.refresh()
        #expect(b.value(forKey: "last") == .string("last"))
    }

    @Test("the commit listeners are told of each mark that signs writes, once it is written (kvfs mount --syncthing's scan), not of the unsigned write before it, nor of a sync point with nothing to sign", arguments: [false, true])
    func commitListenersHearOfEachMark(mount: Bool) throws {
        defer { fixture.cleanup() }
        let (store, watcher) = mount ? try mounted("m") : (try fixture.open("p"), nil)
        defer { watcher?.stop(); store.close() }
        // What the segment ends with at each call: a scan asked for then carries it.
        let endings = Mutex<[UInt8?]>([])
        let token = store.addCommitListener { [self] in
            let last = try? flags(segment(of: store)).last
            endings.withLock { $0.append(last) }
        }
        defer { store.removeCommitListener(token) }
        try store.set(.string("v"), forKey: "k")
        try waitUntil(seconds: 5, "the mark after the write", every: 0.001) { endings.withLock { !$0.isEmpty } }
        try store.flush()  // nothing left to sign: no mark, no call
        #expect(endings.withLock { $0 } == [3], "one call, once the mark is there")
        #expect(try flags(segment(of: store)).suffix(2) == [0, 3])
    }

    @Test("at exit, a journal busy for longer than the exit's patience is left unsigned after that patience, for the device's next process to sign")
    func exitWaitsNoLongerThanItsPatience() throws {
        defer { fixture.cleanup() }
        let program = try fixture.open("p")
        defer { program.close() }
        program.ticker.stop()
        program.signing?.delays = (idle: .seconds(3600), bound: .seconds(3600))
        try program.set(.string("unsigned"), forKey: "k")
        // Another thread's turn at the journal, five times the patience long.
        let entered = DispatchSemaphore(value: 0), holder = Thread {
            _ = try? program.journal.take { _ throws(KVStoreError) in
                entered.signal()
                Thread.sleep(forTimeInterval: 5 * Double(SigningSchedule.exitPatience.components.attoseconds) / 1e18)
            }
        }
        holder.start()
        entered.wait()
        let start = ContinuousClock.now
        SigningSchedule.signAtExit()
        let waited = ContinuousClock.now - start
        #expect(waited >= SigningSchedule.exitPatience && waited < SigningSchedule.exitPatience * 5, "\(waited)")
        #expect(try flags(segment(of: program)).last == 0, "signed although the journal was busy")
        program.reachSyncPoint()  // once the turn is free: the next sync point signs
        #expect(try flags(segment(of: program)).suffix(2) == [0, 3])
    }

    @Test("a mount's burst of writes longer than the bound is marked within it, a write alone once the writer is idle, each mark after unsigned records")
    func marksCrossTheBound() throws {
        defer { fixture.cleanup() }
        let (a, watcher) = try mounted("a")
        let b = try fixture.open("b")
        defer { watcher.stop(); a.close(); b.close() }
        // Writes every 0.1 ms or so for ten times the bound: the idle delay never passes, the bound does.
        let burst = SigningSchedule.bound * 10
        let start = ContinuousClock.now
        var writes = 0
        while start.duration(to: .now) < burst {
            try a.set(.integer(Int64(writes)), forKey: StoreKey("k\(writes % 50)"))
            writes += 1
            usleep(100)
        }
        let during = try flags(segment(of: a))
        let marks = during.filter { $0 == 3 }.count
        #expect(marks >= 3, "\(marks) marks in a burst of \(writes) writes over \(burst)")
        #expect(marks <= writes, "\(marks) marks for \(writes) writes")
        #expect(during.filter { $0 == 0 }.count == writes && !during.contains(1), "every write appended unsigned")
        #expect(a.journal.isLeasedNow)
        // A write alone, then nothing: its mark follows once the idle delay has passed.
        try a.set(.string("alone"), forKey: "alone")
        try waitUntil(seconds: 5, "the mark of a write alone", every: 0.001) { try flags(segment(of: a)).last == 3 }
        _ = b.refresh()
        #expect(b.value(forKey: "alone") == .string("alone") && b.values.count == min(writes, 50) + 1)
    }

    @Test("a process killed between its writes and their mark loses nothing: the device signs them as it opens again, and another device reads them")
    func crashBeforeTheMark() throws {
        defer { fixture.cleanup() }
        var a = try fixture.open("a")
        let b = try fixture.open("b")
        defer { b.close() }
        try a.set(.string("before"), forKey: "k0")
        a.close()
        let keys = try #require(TestSealing.keys(of: a.deviceID, storeID: a.storeID))
        let device = a.deviceID
        // What a daemon killed before its mark leaves: its records, acknowledged, unsigned at the end of its segment.
        let unsigned = (1...3).map { index in
            JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000) + UInt64(index), counter: 0),
                                       device: device), operation: .put(key: StoreKey("k\(index)"), value: .string("unsigned \(index)")))
        }
        try appendUnsigned(unsigned, to: a, sealedWith: keys)
        _ = b.refresh()
        #expect(b.value(forKey: "k1") == nil, "read before their mark")
        a = try fixture.open("a")
        defer { a.close() }
        #expect(a.value(forKey: "k3") == .string("unsigned 3") && a.value(forKey: "k0") == .string("before"))
        #expect(try flags(segment(of: a)).suffix(4) == [0, 0, 0, 3], "signed by a mark as the store opened")
        _ = b.refresh()
        #expect(b.values == a.values && b.values.count == 4)
        #expect(!fixture.warnings.contain("refused"))
    }

    @Test("an unsigned record another member put at the end of a device's folder while it was down is refused, named, never merged nor signed, and cut off; the device's own records before it are kept")
    func memberForgesAnUnsignedRecord() throws {
        defer { fixture.cleanup() }
        var a = try fixture.open("a")
        let b = try fixture.open("b")
        defer { b.close() }
        try a.set(.string("mine"), forKey: "k0")
        a.close()
        let own = try #require(TestSealing.keys(of: a.deviceID, storeID: a.storeID))
        let member = try #require(TestSealing.keys(of: b.deviceID, storeID: b.storeID))
        let device = a.deviceID
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        func put(_ key: StoreKey, _ value: String, at milliseconds: UInt64) -> JournalRecord {
            JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: milliseconds, counter: 0), device: device),
                          operation: .put(key: key, value: .string(value)))
        }
        // a's own last write, killed before its mark, then b's record forged after it, chained right, in b's keys.
        try appendUnsigned([put("k1", "own, unsigned", at: now)], to: a, sealedWith: own)
        let before = try #require(try Files.read(segment(of: a))).count
        try appendUnsigned([put("k0", "forged", at: now + 1), put("forged", "forged", at: now + 2)], to: a, sealedWith: member)
        a = try fixture.open("a")
        defer { a.close() }
        let refusal = "an unsigned record this device did not write"
        #expect(a.value(forKey: "k0") == .string("mine") && a.value(forKey: "forged") == nil)
        #expect(a.value(forKey: "k1") == .string("own, unsigned"))
        #expect(a.status().warnings.contains { $0.kind == .refused && $0.message.contains(refusal) && ($0.file ?? "").hasSuffix(DeviceFolder.segmentName(1)) })
        #expect(fixture.warnings.contain(refusal))
        // Cut off, and a mark after a's own record alone.
        let bytes = try #require(try Files.read(segment(of: a)))
        #expect(bytes.count == before + RecordFrame.headerSize + SealedRecord.markSize)
        #expect(try flags(segment(of: a)).suffix(2) == [0, 3])
        try a.set(.string("after"), forKey: "k2")
        try a.flush()
        _ = b.refresh()
        #expect(b.value(forKey: "k0") == .string("mine") && b.value(forKey: "k1") == .string("own, unsigned"))
        #expect(b.value(forKey: "forged") == nil && b.value(forKey: "k2") == .string("after"))
        #expect(!b.status().warnings.contains { $0.kind == .refused })
    }

    @Test("the device's other process reads a mount's unsigned writes at once (median within 5 ms), before any mark; another device does not")
    func otherProcessReadsUnsignedWrites() throws {
        defer { fixture.cleanup() }
        let (mount, watcher) = try mounted("a")
        defer { watcher.stop(); mount.close() }
        holdMarks(mount)
        let program = try fixture.open("a")  // the same state directory: another process of the device
        let programWatcher = SyncWatcher(store: program, pollInterval: 3600)  // inotify alone brings the mount's writes
        holdMarks(program)  // nor may the program sign the mount's records at its tick
        let b = try fixture.open("b")
        defer { programWatcher.stop(); program.close(); b.close() }
        // The program asked for the journal as it opened: the mount takes its lease again a second after.
        usleep(1_100_000)
        try mount.set(.integer(-1), forKey: "from-mount")
        #expect(mount.journal.isLeasedNow)
        var delays: [Duration] = []
        for index in 0..<20 {
            try mount.set(.integer(Int64(index)), forKey: "from-mount")
            let start = ContinuousClock.now
            while program.entry(forKey: "from-mount")?.value != .integer(Int64(index)), start.duration(to: .now) < .seconds(5) { usleep(100) }
            delays.append(start.duration(to: .now))
        }
        #expect(program.entry(forKey: "from-mount")?.value == .integer(19))
        let median = delays.sorted()[delays.count / 2]
        #expect(median < .milliseconds(5), "median \(median), all \(delays)")
        #expect(try flags(segment(of: mount)).suffix(21) == [UInt8](repeating: 0, count: 21), "the mount's writes are not signed yet")
        _ = b.refresh()
        #expect(b.value(forKey: "from-mount") == nil, "another device read a record no mark signs")
    }
}
