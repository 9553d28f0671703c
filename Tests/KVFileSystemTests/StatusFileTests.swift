import Foundation
import Synchronization
import Testing
@testable import KVFileSystem

/// `.kvfs/status` gives readers that trust its size (Foundation's
/// `Data(contentsOf:)` reads exactly `fstat`'s size after the open; some
/// editors the size a `stat` gave before it) the whole document, though each
/// document has another length.
@Suite("The status file's size")
struct StatusFileTests {
    /// Documents of changing length, as the status's times and counts make them.
    static func documents() -> @Sendable () -> [UInt8] {
        let made = Atomic(0)
        return {
            let number = made.add(1, ordering: .relaxed).newValue
            return Array("{\"made\":\(number),\"pad\":\"\(String(repeating: "x", count: Int.random(in: 0...300)))\"}\n".utf8)
        }
    }

    /// What a reader that trusts `size` reads from `handle`.
    static func read(_ file: StatusFile, _ handle: UInt64, size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < size {
            var chunk: [UInt8] = []
            file.read(handle, offset: bytes.count, size: min(64, size - bytes.count)) { chunk = Array($0) }
            if chunk.isEmpty { break }
            bytes += chunk
        }
        return bytes
    }

    static func isWholeJSON(_ bytes: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) != nil
    }

    @Test("open, fstat, read that many bytes: the whole document, and the size is exactly its length")
    func readTheWayFoundationDoes() {
        let file = StatusFile(make: Self.documents())
        for handle in UInt64(1)...300 {
            file.open(handle, opener: 7)
            let size = file.size(for: nil, asker: 7)
            let bytes = Self.read(file, handle, size: size)
            #expect(Self.isWholeJSON(bytes) && bytes.count == size, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(Self.read(file, handle, size: .max) == bytes, "nothing past the size")
            file.release(handle)
        }
    }

    @Test("stat, then open and read the size stat gave: the whole document")
    func statBeforeOpen() {
        let file = StatusFile(make: Self.documents())
        for handle in UInt64(1)...300 {
            let size = file.size(for: nil, asker: 7)
            _ = file.size(for: nil, asker: 8)  // another thread's stat between
            file.open(handle, opener: 7)
            let bytes = Self.read(file, handle, size: size)
            #expect(Self.isWholeJSON(bytes) && bytes.count == size)
            file.release(handle)
        }
    }

    @Test("readers on many threads at once, each open while others are: every one reads a whole document")
    func readersAtOnce() {
        let file = StatusFile(make: Self.documents())
        let handles = Atomic<UInt64>(0)
        let broken = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for _ in 0..<200 {
                let handle = handles.add(1, ordering: .relaxed).newValue
                let asker = Int32(thread + 1)
                file.open(handle, opener: asker)
                // Half of them fstat from another thread than the one that opened.
                let size = file.size(for: nil, asker: handle % 2 == 0 ? asker : asker + 100)
                if !Self.isWholeJSON(Self.read(file, handle, size: size)) { broken.add(1, ordering: .relaxed) }
                file.release(handle)
            }
        }
        #expect(broken.load(ordering: .relaxed) == 0)
    }

    @Test("a handle whose release is late serves a longer document: the next open's fstat is that length, and the new document is exactly that long, whole JSON ending in a newline")
    func lateReleaseOfALongerDocument() {
        let lengths = Atomic(0)
        let file = StatusFile(make: {  // each document shorter than the one before
            let made = lengths.add(1, ordering: .relaxed).newValue
            return Array("{\"pad\":\"\(String(repeating: "x", count: 400 - made))\"}\n".utf8)
        })
        file.open(1, opener: 7)
        let first = file.size(for: nil, asker: 7)
        file.open(2, opener: 7)  // handle 1's RELEASE has not arrived
        let size = file.size(for: nil, asker: 7)
        let bytes = Self.read(file, 2, size: size)
        #expect(size == first)
        #expect(bytes.count == size && Self.read(file, 2, size: .max) == bytes && Self.isWholeJSON(bytes) && bytes.last == 0x0A)
        let size8 = file.size(for: nil, asker: 8)  // another thread's stat, while 7's handles are open: its open reads that much
        file.open(3, opener: 8)
        #expect(Self.read(file, 3, size: .max).count == size8 && Self.isWholeJSON(Self.read(file, 3, size: .max)))
    }

    @Test("a stat's size leaves StatusFile.slack bytes of room: the open after it serves the status of its own moment when that grew by up to the slack, and the stat's own document, whole, when it grew by one byte more")
    func slackAfterAStat() throws {
        let pad = Atomic(0)
        let file = StatusFile(make: { Array("{\"pad\":\"\(String(repeating: "x", count: pad.load(ordering: .relaxed)))\"}\n".utf8) })
        func padLength(_ bytes: [UInt8]) throws -> Int? {
            ((try JSONSerialization.jsonObject(with: Data(bytes))) as? [String: String])?["pad"]?.count
        }
        let size = file.size(for: nil, asker: 7)  // a document of 11 bytes, told as 11 + slack
        pad.store(StatusFile.slack, ordering: .relaxed)  // the next one exactly as long as that
        file.open(1, opener: 7)
        let fresh = Self.read(file, 1, size: .max)
        #expect(fresh.count == size && Self.isWholeJSON(fresh))
        #expect(try padLength(fresh) == StatusFile.slack, "the status of the open's moment")
        file.release(1)
        let grownSize = file.size(for: nil, asker: 7)  // 11 + slack bytes, told as 11 + 2 × slack
        pad.store(2 * StatusFile.slack + 1, ordering: .relaxed)  // one byte more than that
        file.open(2, opener: 7)
        let kept = Self.read(file, 2, size: .max)
        #expect(kept.count == grownSize && Self.isWholeJSON(kept))
        #expect(try padLength(kept) == StatusFile.slack, "the stat's document: the one of now does not fit")
    }

    @Test("lseek(SEEK_END), which sends the handle, gets the handle's own document's length")
    func sizeByHandle() {
        let file = StatusFile(make: Self.documents())
        file.open(1, opener: 7)
        file.open(2, opener: 8)
        #expect(file.size(for: 1, asker: 9) == Self.read(file, 1, size: .max).count)
        #expect(file.size(for: 2, asker: 9) == Self.read(file, 2, size: .max).count)
    }
}
