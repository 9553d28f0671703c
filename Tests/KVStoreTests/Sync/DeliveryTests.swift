import Foundation
import Testing
@testable import KVStore
import TestSupport

/// Delivery (docs/sync.md § Delivery): which devices have read a key's
/// current version, and waiting until every active device has read this
/// device's latest writes; devices publish how far they have read promptly
/// while someone waits for delivery (`waiting.json`, ``WaitSignal``), and on
/// their schedule otherwise.
@Suite("Delivery")
struct DeliveryTests {
    let fixture = SyncFixture()

    /// A store that publishes promptly when asked, and not on its schedule while a test runs.
    private func reader(_ name: String) throws -> DeviceStore {
        let store = try fixture.open(name)
        store.progress.interval = 3600
        return store
    }

    /// The bytes of `store`'s `progress.json` (each publication stamps its `at` anew).
    private func published(_ store: DeviceStore) throws -> [UInt8]? {
        try Files.read(fixture.folder(of: store) + "/" + ReadProgress.fileName)
    }

    /// Whether `store`'s published progress says it read `writer`'s folder up to `stamp`.
    private func says(_ store: DeviceStore, read stamp: Stamp) -> Bool {
        (store.sync.progress(of: store.deviceID)?.read[stamp.device]).map { $0 >= stamp.time } ?? false
    }

    /// What `store`'s folder's `waiting.json` asks, if it is there.
    private func request(of store: DeviceStore) throws -> WaitSignal? {
        // Through the store: in a sealed store the file is signed (docs/sealed.md § Signed files).
        store.sync.waitSignal(in: try store.sync.folder(of: store.deviceID).open(), of: store.deviceID, arrived: nil)
    }

    /// The inode of the file at `path`: a file replaced atomically has a new one.
    private func inode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.systemFileNumber] as? Int
    }

    @Test("deliveredTo(key:) lists this device, the writer, and each device whose published progress says it read the version")
    func deliveredToFollowsProgress() throws {
        let a = try fixture.open("a"), b = try fixture.open("b"), c = try fixture.open("c")
        defer { a.close(); b.close(); c.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        #expect(a.deliveredTo(key: "k").map(\.name) == ["a"])
        #expect(a.deliveredTo(key: "missing").isEmpty)
        c.refresh(after: a)
        try waitUntil(seconds: 10, "c's progress to say it read k") { a.deliveredTo(key: "k").map(\.name) == ["a", "c"] }
        #expect(a.deliveredTo(key: "k").map(\.id) == [a.deviceID, c.deviceID])
        b.refresh()
        #expect(b.deliveredTo(key: "k").map(\.name) == ["b", "a", "c"])  // this device, then the others by name
        // History says it on the current version, and only there.
        try a.set(.integer(2), forKey: "k")
        let versions = a.history(forKey: "k")
        #expect(versions.map(\.deliveredTo) == [nil, ["a"]])
    }

    @Test("while nobody waits, reading another device's records rewrites no progress.json: 20 reads, no publication (67afe0a published one per 100 ms)")
    func noPromptPublicationWhileNobodyWaits() throws {
        let a = try fixture.open("a"), b = try reader("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        let before = try published(b)
        for round in 1...20 {
            try a.set(.integer(Int64(round)), forKey: "k")
            b.refresh(after: a)
            Thread.sleep(forTimeInterval: 0.02)
        }
        Thread.sleep(forTimeInterval: 3 * ProgressPublisher.promptInterval)
        #expect(b.entry(forKey: "k")?.value == .integer(20))
        #expect(try published(b) == before, "b published its progress with nobody waiting")
        #expect(try request(of: a) == nil, "nobody asked")
    }

    @Test("a waiter's request (waiting.json) makes the other devices publish what they read of its writer promptly, and only that")
    func requestMakesOthersPublishPromptly() throws {
        let a = try fixture.open("a"), b = try reader("b"), c = try fixture.open("c")
        defer { a.close(); b.close(); c.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        let stamp = try #require(a.entry(forKey: "k")?.stamp)
        b.refresh(after: a)  // read, not published: nobody waits yet
        Thread.sleep(forTimeInterval: 2 * ProgressPublisher.promptInterval)
        #expect(!says(b, read: stamp))
        #expect(a.devicesLacking().map(\.name) == ["b", "c"])  // asks
        #expect(try request(of: a)?.devices == [a.deviceID])
        let asked = ContinuousClock.now
        b.refresh()  // sees the request: publishes what it had read of a
        try waitUntil(seconds: 5, "b's progress.json to say it read a's write") { says(b, read: stamp) }
        #expect(ContinuousClock.now - asked < .seconds(2))
        // What it reads of a device nobody waits for is published on the schedule.
        let before = try published(b)
        try c.set(.integer(2), forKey: "c-key")
        b.refresh(after: c)
        Thread.sleep(forTimeInterval: 3 * ProgressPublisher.promptInterval)
        #expect(b.entry(forKey: "c-key") != nil)
        #expect(try published(b) == before)
        // A refresh that reads nothing new publishes nothing, request or not.
        b.refresh()
        Thread.sleep(forTimeInterval: 3 * ProgressPublisher.promptInterval)
        #expect(try published(b) == before)
    }

    @Test("a waiter polling every 10 ms writes its request once, renews it past half its time, and adds the writers it waits for")
    func requestIsWrittenOnceAndRenewed() throws {
        let a = try fixture.open("a"), b = try reader("b"), c = try fixture.open("c")
        defer { a.close(); b.close(); c.close(); fixture.cleanup() }
        a.waits.lasting = 1
        try a.set(.integer(1), forKey: "k")
        let file = fixture.folder(of: a) + "/" + WaitSignal.fileName
        #expect(!a.devicesLacking().isEmpty)
        let first = try #require(inode(file))
        for _ in 0..<20 {
            #expect(!a.devicesLacking().isEmpty)
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(inode(file) == first, "one request for a wait of 200 ms")
        Thread.sleep(forTimeInterval: 0.6)  // past half its second
        #expect(!a.devicesLacking().isEmpty)
        #expect(inode(file) != first, "renewed")
        // A version another device wrote adds that device to the standing request.
        try c.set(.integer(2), forKey: "c-key")
        a.refresh(after: c)
        #expect(a.deliveredTo(key: "c-key").map(\.name) == ["a", "c"])
        #expect(try request(of: a)?.devices == [a.deviceID, c.deviceID])
    }

    @Test("deliveredTo(key:) and history(forKey:) of a version some device has not read ask for it, as waiting does; of one all have read, they ask nothing")
    func queriesAsk() throws {
        let a = try fixture.open("a"), b = try reader("b"), c = try fixture.open("c")
        defer { a.close(); b.close(); c.close(); fixture.cleanup() }
        // c's write, which b reads but does not publish; a asks who has read it.
        try c.set(.integer(1), forKey: "k")
        a.refresh(after: c)
        b.refresh()
        #expect(a.deliveredTo(key: "k").map(\.name) == ["a", "c"])
        #expect(try request(of: a)?.devices == [c.deviceID])
        b.refresh()
        try waitUntil(seconds: 5, "b to publish that it read c's write") { a.deliveredTo(key: "k").map(\.name) == ["a", "b", "c"] }
        // history(forKey:), with no request standing.
        try FileManager.default.removeItem(atPath: fixture.folder(of: a) + "/" + WaitSignal.fileName)
        try a.set(.integer(2), forKey: "k")
        b.refresh(after: a)
        c.refresh()
        Thread.sleep(forTimeInterval: 2 * ProgressPublisher.promptInterval)
        #expect(a.history(forKey: "k", withDelivery: false).last?.deliveredTo == nil)  // as .kvfs/history lists it
        #expect(try request(of: a) == nil)
        #expect(a.history(forKey: "k").last?.deliveredTo == ["a"])
        #expect(try request(of: a)?.devices == [a.deviceID])
        b.refresh()
        c.refresh()
        try waitUntil(seconds: 5, "b and c to publish that they read a's write") { a.history(forKey: "k").last?.deliveredTo == ["a", "b", "c"] }
        // Once every device has read it, asking writes nothing.
        try FileManager.default.removeItem(atPath: fixture.folder(of: a) + "/" + WaitSignal.fileName)
        #expect(a.deliveredTo(key: "k").map(\.name) == ["a", "b", "c"])
        #expect(a.devicesLacking().isEmpty)
        #expect(try request(of: a) == nil)
    }

    @Test("a request lapses once its waiter has gone: a device reading the waiter's records after it publishes on its schedule")
    func requestLapses() throws {
        let a = try fixture.open("a"), b = try reader("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        a.waits.lasting = 0.3
        try a.set(.integer(1), forKey: "k")
        #expect(a.devicesLacking().map(\.name) == ["b"])  // asks, then goes away
        Thread.sleep(forTimeInterval: 0.5)
        let before = try published(b)
        b.refresh(after: a)
        Thread.sleep(forTimeInterval: 3 * ProgressPublisher.promptInterval)
        #expect(b.entry(forKey: "k") != nil)
        #expect(try published(b) == before, "b published for a request that had lapsed")
        // A waiter that comes back asks again.
        #expect(a.devicesLacking().map(\.name) == ["b"])
        b.refresh()
        try waitUntil(seconds: 5, "b to publish for the new request") { a.devicesLacking().isEmpty }
    }

    @Test("waitUntilDelivered returns once every active device has read this device's latest writes, or names those that have not")
    func waitUntilDelivered() async throws {
        let a = try fixture.open("a"), b = try reader("b"), c = try fixture.open("c")
        defer { a.close(); b.close(); c.close(); fixture.cleanup() }
        // b published when it opened, and not since: under the full suite this task can wait for a thread
        // for minutes, and b must still count as active when it does (it is quiet after 300 s by default).
        let active: TimeInterval = 86_400
        #expect(await a.waitUntilDelivered(timeout: .zero).isEmpty)  // nothing written: nothing to wait for
        try a.set(.integer(1), forKey: "k")
        c.close()  // stopped: not waited for
        let waited = ContinuousClock.now
        #expect(await a.waitUntilDelivered(timeout: .milliseconds(300), staleAfter: active).map(\.name) == ["b"])
        #expect(ContinuousClock.now - waited >= .milliseconds(300))
        // A thread of its own, not a task: under the full suite the tasks' threads can all be busy for seconds.
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.1)
            b.refresh(after: a)
        }
        #expect(await a.waitUntilDelivered(timeout: .seconds(10), staleAfter: active).isEmpty)
        // Of given keys: only this device's latest writes of those count.
        try a.set(.integer(2), forKey: "other")
        #expect(a.devicesLacking(latestWritesOf: ["k", "never-written"], staleAfter: active).isEmpty)
        #expect(a.devicesLacking(latestWritesOf: ["other"], staleAfter: active).map(\.name) == ["b"])
        #expect(a.devicesLacking(staleAfter: active).map(\.name) == ["b"])
    }

    @Test("a device that has not been heard from for longer than the status's threshold is not waited for")
    func quietDevicesAreNotWaitedFor() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        #expect(a.devicesLacking().map(\.name) == ["b"])
        #expect(a.devicesLacking(staleAfter: -1).isEmpty)  // every device counts as quiet
    }

    @Test("a request that cannot be written is said once, tried again only after half its time, and the wait goes on")
    func requestThatCannotBeWritten() throws {
        let a = try fixture.open("a"), b = try reader("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try Files.makeDirectory(fixture.folder(of: a) + "/" + WaitSignal.fileName + "/x")  // a folder under its name
        try a.set(.integer(1), forKey: "k")
        for _ in 0..<5 { #expect(a.devicesLacking().map(\.name) == ["b"]) }
        #expect(fixture.warnings.all.filter { $0.contains(WaitSignal.fileName) }.count == 1, "\(fixture.warnings.all)")
    }

    @Test("a request's file: its devices and seconds, read back; a reader lets it stand at most 60 s, and not at all when dated ahead by its seconds")
    func signalFile() throws {
        let a = DeviceID.random(), b = DeviceID.random()
        let signal = WaitSignal(devices: [a, b], seconds: 10)
        let text = String(decoding: signal.json(), as: UTF8.self)
        #expect(text == "{\"of\":[\(([a, b].map { "\"\($0.hex)\"" }.sorted()).joined(separator: ","))],\"seconds\":10}\n")
        #expect(WaitSignal(json: text) == signal)
        #expect(WaitSignal(json: #"{"of":["nothex"],"seconds":10}"#) == nil)
        #expect(WaitSignal(json: #"{"of":[],"seconds":"10"}"#) == nil)
        #expect(WaitSignal(json: "[]") == nil)
        let now = Date()
        #expect(signal.remaining(at: now) == 0, "not arrived")
        #expect(WaitSignal(devices: [a], seconds: 10, arrived: now).remaining(at: now + 4) == 6)
        #expect(WaitSignal(devices: [a], seconds: 10, arrived: now).remaining(at: now + 11) <= 0)
        #expect(WaitSignal(devices: [a], seconds: 3600, arrived: now).remaining(at: now + 59) == 1)
        #expect(WaitSignal(devices: [a], seconds: 3600, arrived: now).remaining(at: now + 61) <= 0)
        #expect(WaitSignal(devices: [a], seconds: 10, arrived: now + 5).remaining(at: now) == 15)
        #expect(WaitSignal(devices: [a], seconds: 10, arrived: now + 10).remaining(at: now) == 0)
    }
}
