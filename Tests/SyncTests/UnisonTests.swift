import Foundation
import KVStore
import Testing

/// Two devices on two folders that `unison -batch -auto` runs keep identical.
@Suite("Unison between two folders")
struct UnisonTests {
    @Test(.enabled(if: ChildProcess.find("unison") != nil, "needs unison"), .timeLimit(.minutes(2)))
    func concurrentWritesOnBothSidesAgreeWithoutConflicts() throws {
        let folder = TransportFolder()
        defer { folder.cleanup() }
        let folders = [folder.path + "/A", folder.path + "/B"]
        try folders.forEach { try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: true) }
        var statuses: [Int32] = []
        func sync() throws {
            let result = try ChildProcess.run("unison", folders + ["-batch", "-auto", "-silent", "-confirmbigdel=false"],
                                              environment: ["UNISON": folder.path + "/unison"])
            statuses.append(result.status)
        }
        let a = try WatchedDevice("a", sync: folders[0], root: folder.path)
        defer { a.close() }
        try sync()  // the store id reaches B before the second device starts
        let b = try WatchedDevice("b", sync: folders[1], root: folder.path)
        defer { b.close() }
        writeConcurrently([a.store, b.store], writes: 100)
        try waitForEqualStores([a.store, b.store], seconds: 40) {
            try sync()
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(a.store.values.count == 2 * 90 + 3)
        #expect(!statuses.contains(1), "unison skipped a conflict: \(statuses)")  // 2 = a file changed mid-copy, retried
        #expect(statuses.last == 0)
        #expect(conflictCopies(in: folder.path).isEmpty)
    }
}
