import Foundation
import Testing
@testable import KVStore
import TestSupport

/// Delivery (docs/sync.md § Delivery): which devices have read a key's
/// current version, and waiting until every active device has read this
/// device's latest writes; devices publish how far they have read soon after
/// reading.
@Suite("Delivery")
struct DeliveryTests {
    let fixture = SyncFixture()

    @Test("deliveredTo(key:) lists this device, the writer, and each device whose published progress says it read the version")
    func deliveredToFollowsProgress() throws {
        let a = try fixture.open("a"), b = try fixture.open("b"), c = try fixture.open("c")
        defer { a.close(); b.close(); c.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        #expect(a.deliveredTo(key: "k").map(\.name) == ["a"])
        #expect(a.deliveredTo(key: "missing").isEmpty)
        c.refresh()
        try waitUntil(seconds: 10, "c's progress to say it read k") { a.deliveredTo(key: "k").map(\.name) == ["a", "c"] }
        #expect(a.deliveredTo(key: "k").map(\.id) == [a.deviceID, c.deviceID])
        b.refresh()
        #expect(b.deliveredTo(key: "k").map(\.name) == ["b", "a", "c"])  // this device, then the others by name
        // History says it on the current version, and only there.
        try a.set(.integer(2), forKey: "k")
        let versions = a.history(forKey: "k")
        #expect(versions.map(\.deliveredTo) == [nil, ["a"]])
    }

    @Test("a device publishes how far it has read within a fraction of a second of reading, not only every 10 s")
    func progressIsPublishedPromptly() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        let stamp = try #require(a.entry(forKey: "k")?.stamp)
        let read = ContinuousClock.now
        b.refresh()
        try waitUntil(seconds: 5, "b's progress.json to say it read a's write") {
            (b.sync.progress(of: b.deviceID)?.read[a.deviceID]).map { $0 >= stamp.time } ?? false
        }
        #expect(ContinuousClock.now - read < .seconds(2))
        // It publishes again only when how far it has read moves: a refresh that reads nothing new writes nothing.
        let published = try #require(try Files.read(fixture.folder(of: b) + "/progress.json"))
        b.refresh()
        Thread.sleep(forTimeInterval: 2 * ProgressPublisher.promptInterval)
        #expect(try Files.read(fixture.folder(of: b) + "/progress.json") == published)
    }

    @Test("waitUntilDelivered returns once every active device has read this device's latest writes, or names those that have not")
    func waitUntilDelivered() async throws {
        let a = try fixture.open("a"), b = try fixture.open("b"), c = try fixture.open("c")
        defer { a.close(); b.close(); c.close(); fixture.cleanup() }
        #expect(await a.waitUntilDelivered(timeout: .zero).isEmpty)  // nothing written: nothing to wait for
        try a.set(.integer(1), forKey: "k")
        c.close()  // stopped: not waited for
        let waited = ContinuousClock.now
        #expect(await a.waitUntilDelivered(timeout: .milliseconds(300)).map(\.name) == ["b"])
        #expect(ContinuousClock.now - waited >= .milliseconds(300))
        // A thread of its own, not a task: under the full suite the tasks' threads can all be busy for seconds.
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.1)
            b.refresh()
        }
        #expect(await a.waitUntilDelivered(timeout: .seconds(10)).isEmpty)
        // Of given keys: only this device's latest writes of those count.
        try a.set(.integer(2), forKey: "other")
        #expect(a.devicesLacking(latestWritesOf: ["k", "never-written"]).isEmpty)
        #expect(a.devicesLacking(latestWritesOf: ["other"]).map(\.name) == ["b"])
        #expect(a.devicesLacking().map(\.name) == ["b"])
    }

    @Test("a device that has not been heard from for longer than the status's threshold is not waited for")
    func quietDevicesAreNotWaitedFor() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        #expect(a.devicesLacking().map(\.name) == ["b"])
        #expect(a.devicesLacking(staleAfter: -1).isEmpty)  // every device counts as quiet
    }
}
