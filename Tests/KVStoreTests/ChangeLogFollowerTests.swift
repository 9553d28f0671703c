import Foundation
import Testing
@testable import KVStore

/// `kvfs changes --follow` and the mount's `.kvfs/changes.log` read the log
/// through a ``ChangeLogFollower``: each line once, in order, though the log
/// is cut back to its newest half whenever it passes its cap.
@Suite("Following the change log")
final class ChangeLogFollowerTests {
    let folder = TemporaryFolder("kvfs-follow")
    var path: String { folder.sub("changes.log").path }

    deinit { folder.cleanup() }

    /// The `seq` of each line, failing on a line that is not whole JSON.
    func sequences(_ bytes: [UInt8]) throws -> [Int] {
        try String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON line: \(line)")
            return try #require(object["seq"] as? Int)
        }
    }

    /// The log's inode number: another one after each cut.
    var inode: Int? { (try? FileManager.default.attributesOfItem(atPath: path))?[.systemFileNumber] as? Int }

    @Test("a follower reading at any pace across many cuts gets each line once, in order, and none lost")
    func eachLineOnceAcrossCuts() throws {
        let log = ChangeLog(path: path, capacity: 4096)
        let follower = ChangeLogFollower(path: path)
        var read: [UInt8] = []
        var random = SystemRandomNumberGenerator()
        var appended = 0
        var cuts = 0
        while appended < 2000 {
            for _ in 0..<min(Int.random(in: 1...12, using: &random), 2000 - appended) {
                let before = inode
                appended += 1
                log.append(StoreChange(reason: .serverChange, keys: ["key\(appended)"]))
                if before != nil && before != inode { cuts += 1 }
            }
            read += follower.newLines()
        }
        #expect(cuts > 50, "the log was cut back \(cuts) times")
        #expect(try sequences(read) == Array(1...2000))
        #expect(follower.missed == 0)
        #expect(follower.lastSequence == 2000)
        #expect(follower.newLines().isEmpty, "nothing new, nothing handed out")
    }

    @Test("a follower that falls behind by more than the log keeps gets the lines left, once, and counts those it missed")
    func fallingBehind() throws {
        let log = ChangeLog(path: path, capacity: 4096)
        let follower = ChangeLogFollower(path: path)
        for n in 1...10 { log.append(StoreChange(reason: .serverChange, keys: ["k\(n)"])) }
        var read = follower.newLines()
        for n in 11...400 { log.append(StoreChange(reason: .serverChange, keys: ["k\(n)"])) }
        read += follower.newLines()
        let sequences = try sequences(read)
        #expect(Array(sequences.prefix(10)) == Array(1...10))
        let resumed = try #require(sequences.dropFirst(10).first)
        #expect(resumed > 11 && Array(sequences.dropFirst(10)) == Array(resumed...400), "\(sequences)")
        #expect(follower.missed == resumed - 11)
    }

    @Test("a log that begins again (removed, a new state directory) is read from its first line")
    func aLogThatBeginsAgain() throws {
        let follower = ChangeLogFollower(path: path)
        #expect(follower.newLines().isEmpty, "no log yet")
        let log = ChangeLog(path: path)
        for n in 1...5 { log.append(StoreChange(reason: .serverChange, keys: ["k\(n)"])) }
        #expect(try sequences(follower.newLines()) == Array(1...5))
        try FileManager.default.removeItem(atPath: path)
        let again = ChangeLog(path: path)
        for n in 1...3 { again.append(StoreChange(reason: .serverChange, keys: ["k\(n)"])) }
        #expect(try sequences(follower.newLines()) == [1, 2, 3])
    }

    @Test("a line still being written waits for the next call")
    func aPartLineWaits() throws {
        let line = ChangeLog.line(StoreChange(reason: .serverChange, keys: ["k"]), sequence: 1)
        try Data(line.utf8.prefix(20)).write(to: URL(fileURLWithPath: path))
        let follower = ChangeLogFollower(path: path)
        #expect(follower.newLines().isEmpty)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line.utf8.dropFirst(20)))
        try handle.close()
        #expect(follower.newLines() == Array(line.utf8))
    }
}
