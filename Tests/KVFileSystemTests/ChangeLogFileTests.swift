import Foundation
import Testing
@testable import KVFileSystem
@testable import KVStore

/// `.kvfs/changes.log` as the mount serves it, driven the way GNU tail
/// drives a FUSE file (coreutils src/tail.c, `tail_forever`): `fstat`
/// (which FUSE sends without the handle) every poll, "file truncated" and a
/// new start when the size went down, else as many bytes as the size grew.
/// The mount tests follow it with the real `tail`; these go through many
/// more cuts, with a log whose cap is small.
@Suite("The change log as the mount serves it")
struct ChangeLogFileTests {
    /// A log on disk with a small cap, and the file the mount makes of it.
    final class Log {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("kvfs-changelogfile-\(UUID())")
        let disk: ChangeLog
        let served: ChangeLogFile
        private(set) var appended = 0
        private var nextHandle: UInt64 = 1

        init(capacity: Int = 4096) throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            disk = ChangeLog(path: folder.appendingPathComponent("changes.log").path, capacity: capacity)
            served = ChangeLogFile(path: disk.path, capacity: capacity)
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        func append(_ count: Int) {
            for _ in 0..<count {
                appended += 1
                disk.append(StoreChange(reason: .serverChange, keys: ["key\(appended)"]))
            }
        }

        func open() -> UInt64 {
            defer { nextHandle += 1 }
            served.open(nextHandle, opener: 1)
            return nextHandle
        }

        /// What `handle` reads from `offset` to its end of file.
        func read(_ handle: UInt64, from offset: Int, limit: Int = .max) -> [UInt8] {
            var bytes: [UInt8] = []
            while bytes.count < limit {
                var chunk: [UInt8] = []
                served.read(handle, offset: offset + bytes.count, size: min(4096, limit - bytes.count)) { chunk = Array($0) }
                if chunk.isEmpty { break }
                bytes += chunk
            }
            return bytes
        }

        /// What a new reader reads: `cat`.
        func cat() -> [UInt8] {
            let handle = open()
            defer { served.release(handle) }
            return read(handle, from: 0)
        }
    }

    /// GNU tail following a file: its descriptor's position, the size it believes, what it printed.
    struct Tail {
        let handle: UInt64
        var position = 0
        var size = 0
        var printed: [UInt8] = []
        var truncations = 0

        /// `tail -n +1 -f`: the whole file, then its growth.
        init(_ log: Log) {
            handle = log.open()
            printed = log.read(handle, from: 0)
            position = printed.count
            size = position
        }

        mutating func poll(_ log: Log) {
            let statSize = log.served.size(for: nil, asker: 1)
            if statSize < size {
                truncations += 1
                position = 0
                size = 0
            }
            let bytes = log.read(handle, from: position, limit: statSize - size)
            printed += bytes
            position += bytes.count
            size += bytes.count
        }
    }

    /// The `seq` of each line, failing on a line that is not whole JSON.
    func sequences(_ bytes: [UInt8]) throws -> [Int] {
        try String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON line: \(line)")
            return try #require(object["seq"] as? Int)
        }
    }

    /// Whether `sequences` are consecutive.
    func consecutive(_ sequences: [Int]) -> Bool {
        zip(sequences, sequences.dropFirst()).allSatisfy { $0 + 1 == $1 }
    }

    @Test("tail -f never sees the file shrink: across many cuts it prints each line once, in order, none lost")
    func tailAcrossCuts() throws {
        let log = try Log()
        log.append(30)
        var early = Tail(log)
        var late: Tail?
        var cutsSeen = 0
        var windowStart = try sequences(log.cat()).first
        for round in 1...600 {
            log.append(Int.random(in: 1...9))
            early.poll(log)
            if round == 100 { late = Tail(log) }
            late?.poll(log)
            let seen = try sequences(log.cat())
            #expect(consecutive(seen) && seen.last == log.appended, "cat after round \(round): \(seen)")
            if seen.first != windowStart { cutsSeen += 1 }
            windowStart = seen.first
            let handles = [early.handle] + (late.map { [$0.handle] } ?? [])
            for handle in handles {
                #expect(log.served.size(for: handle, asker: 1) <= log.served.size(for: nil, asker: 1), "stat shows less than a reader reads")
            }
        }
        #expect(cutsSeen > 10, "the file was cut back \(cutsSeen) times")
        #expect(early.truncations == 0 && late?.truncations == 0)
        let printed = try sequences(early.printed)
        #expect(printed == Array(1...log.appended))
        let printedLate = try sequences(try #require(late).printed)
        #expect(consecutive(printedLate) && printedLate.last == log.appended)
    }

    @Test("while the file is open it is cut back only past four times the cap, and its size is what every reader reads")
    func heldWhileOpen() throws {
        let log = try Log(capacity: 4096)
        log.append(10)
        let reader = log.open()
        for _ in 0..<150 {  // about 14 KiB: past the cap, short of four times it, while the reader looks on
            log.append(1)
            _ = log.served.size(for: nil, asker: 1)
        }
        let size = log.served.size(for: nil, asker: 1)
        #expect(size > 4096 && size <= 4 * 4096)
        #expect(size == log.served.size(for: reader, asker: 1), "one file for every reader")
        #expect(log.cat().count == size)
        log.served.release(reader)
        #expect(log.served.size(for: nil, asker: 1) <= 4096, "cut back once nobody has it open")
        #expect(log.cat().count == log.served.size(for: nil, asker: 1))
    }

    @Test("a reader that falls behind by more than four times the cap reads on at the oldest line kept, never a line twice")
    func fallingBehind() throws {
        let log = try Log(capacity: 4096)
        log.append(10)
        let reader = log.open()
        let first = log.read(reader, from: 0)
        for _ in 0..<600 {  // about 55 KiB unread, while others look at the file
            log.append(1)
            _ = log.served.size(for: nil, asker: 2)
        }
        let rest = log.read(reader, from: first.count)
        let sequences = try sequences(first + rest)
        #expect(Array(sequences.prefix(10)) == Array(1...10))
        let resumed = try #require(sequences.dropFirst(10).first)
        #expect(resumed > 11 && Array(sequences.dropFirst(10)) == Array(resumed...log.appended))
        #expect(log.served.size(for: reader, asker: 1) == first.count + rest.count)
    }

    @Test("lines cut from the log on disk before the mount read them leave no hole in what a new reader gets")
    func aGapOnDisk() throws {
        let log = try Log(capacity: 4096)
        log.append(10)
        #expect(try sequences(log.cat()) == Array(1...10))
        log.append(300)  // cut back on disk, many times over, while nobody looked
        let seen = try sequences(log.cat())
        #expect(consecutive(seen) && seen.last == log.appended && seen.first! > 11)
    }
}
