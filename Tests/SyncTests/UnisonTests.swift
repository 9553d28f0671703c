import Foundation
import Synchronization
@testable import KVStore
import Testing

/// Two devices on two folders that `unison -batch -auto` runs keep identical.
@Suite("Unison between two folders")
struct UnisonTests {
    @Test(.enabled(if: ChildProcess.find("unison") != nil, "needs unison"), .timeLimit(.minutes(2)), arguments: Sealing.allCases)
    func concurrentWritesOnBothSidesAgreeWithoutConflicts(_ sealing: Sealing) throws {
        let folder = TemporaryFolder("kvfs-transport")
        defer { folder.cleanup() }
        let folders = [folder.path + "/A", folder.path + "/B"]
        try folders.forEach { try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: true) }
        var statuses: [Int32] = []
        func sync() throws {
            let result = try ChildProcess.run("unison", folders + ["-batch", "-auto", "-silent", "-confirmbigdel=false"],
                                              environment: ["UNISON": folder.path + "/unison"])
            statuses.append(result.status)
        }
        let a = try WatchedDevice("a", sync: folders[0], root: folder.path, sealing)
        defer { a.close() }
        try sync()  // the store id (and a sealed store's roster) reaches B before the second device starts
        let b = try WatchedDevice("b", sync: folders[1], root: folder.path, sealing)
        defer { b.close() }
        writeConcurrently([a.store, b.store], writes: 100)
        try waitForEqualStores([a.store, b.store], seconds: 40, every: 0.1) {
            try sync()
        }
        #expect(a.store.values.count == 2 * 90 + 3)
        #expect(!statuses.contains(1), "unison skipped a conflict: \(statuses)")  // 2 = a file changed mid-copy, retried
        #expect(statuses.last == 0)
        #expect(conflictCopies(in: folder.path).isEmpty)
    }

    /// Issue 8's second silent stall: a replica first made with `cp -r`
    /// while a device kept writing makes Unison skip that device's journal as
    /// changed on both sides, on every run. The device whose writes stop
    /// arriving says so (status and log), naming its folder and the fix.
    @Test(.enabled(if: ChildProcess.find("unison") != nil, "needs unison"), .timeLimit(.minutes(2)))
    func aReplicaSeededWithCpThatUnisonSkipsIsCalledOut() throws {
        let folder = TemporaryFolder("kvfs-transport")
        defer { folder.cleanup() }
        let (pathA, pathB) = (folder.path + "/A", folder.path + "/B")
        func unison(_ options: [String] = []) throws -> Int32 {
            try ChildProcess.run("unison", [pathA, pathB, "-batch", "-auto", "-silent", "-confirmbigdel=false"] + options,
                                 environment: ["UNISON": folder.path + "/unison"]).status
        }
        let log = Log()
        let a = try DeviceStore(syncDirectory: URL(fileURLWithPath: pathA), stateDirectory: URL(fileURLWithPath: folder.path + "/state-a"),
                                deviceName: "a", warn: log.add)
        defer { a.close() }
        try a.set(.integer(1), forKey: "before-copy")
        #expect(try ChildProcess.run("cp", ["-r", pathA, pathB]).status == 0)
        try a.set(.integer(2), forKey: "after-copy")
        let b = try DeviceStore(syncDirectory: URL(fileURLWithPath: pathB), stateDirectory: URL(fileURLWithPath: folder.path + "/state-b"),
                                deviceName: "b", warn: { _ in })
        defer { b.close() }
        #expect(try unison() == 1, "Unison skips a's journal: changed on both sides since the copy")
        Thread.sleep(forTimeInterval: 1.2)
        b.publishProgress(heartbeat: true)  // b runs: its heartbeat reaches A
        #expect(try unison() == 1)
        a.refresh()
        #expect(b.value(forKey: "after-copy") == nil)
        let stuck = try #require(a.status(staleAfter: 1).warnings.first { $0.kind == .notReadingUs })
        #expect(stuck.device == b.deviceID.hex && stuck.message.contains(a.deviceID.hex) && stuck.fix.contains("-prefer"))
        a.health.staleAfter = 1; a.logHealth(force: true)
        #expect(log.lines.withLock { $0.contains { $0.contains("has not read this device's writes") } })
        #expect(try unison(["-prefer", pathA]) == 0, "the fix: a's machine holds the right copy of a's folder")
        b.refresh()
        #expect(b.value(forKey: "after-copy") == .integer(2))
        b.publishProgress()
        _ = try unison(["-prefer", pathA])
        a.refresh()
        #expect(!a.status(staleAfter: 1).warnings.contains { $0.kind == .notReadingUs })
    }
}

/// A store's warnings, as a daemon's log would get them.
private final class Log: Sendable {
    let lines = Mutex<[String]>([])

    func add(_ line: String) { lines.withLock { $0.append(line) } }
}
