import Foundation
import Testing
@testable import KVStore

@Suite("Journal records and recovery")
struct JournalTests {
    let device = DeviceID.random()

    func record(_ n: Int, _ operation: JournalRecord.Operation) -> JournalRecord {
        JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: UInt64(1000 + n), counter: 0), device: device), operation: operation)
    }

    var sample: [JournalRecord] {
        [record(1, .put(key: "a", value: .string("one"))),
         record(2, .put(key: "b/c", value: .dictionary(["x": .array([.integer(1), .real(2.5)])]))),
         record(3, .rename(from: "a", to: "z", value: .string("one"))),
         record(4, .remove(key: "b/c"))]
    }

    @Test func recordsRoundTrip() {
        let bytes = sample.flatMap(RecordFrame.encode)
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        #expect(scan.records == sample)
        #expect(!scan.stoppedEarly && scan.skipped.isEmpty)
    }

    @Test func aTailTornAtEveryByteRecoversTheRecordsBeforeIt() {
        let whole = sample.flatMap(RecordFrame.encode)
        let last = RecordFrame.encode(sample.last!)
        let before = whole.count - last.count
        for cut in before..<whole.count {
            let scan = Array(whole[0..<cut]).withUnsafeBytes { RecordFrame.scan($0) }
            #expect(scan.records == Array(sample.dropLast()), "cut at \(cut)")
            #expect(scan.resumeOffset == before)
        }
    }

    @Test func aFlippedBitIsDetectedAndTheRecordSkipped() {
        let frames = sample.map(RecordFrame.encode)
        let start = frames[0].count
        for bit in 0..<(frames[1].count * 8) {
            var bytes = frames.flatMap { $0 }
            bytes[start + bit / 8] ^= 1 << (bit % 8)
            let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
            #expect(!scan.records.contains(sample[1]), "bit \(bit)")
            #expect(scan.records.contains(sample[0]) && scan.records.contains(sample[3]), "bit \(bit)")
        }
    }

    @Test func hostileFramesNeverCrashOrHideLaterRecords() {
        var hostile = ByteWriter()
        hostile.u32(UInt32.max)  // a huge length
        hostile.u32(0)
        var junk = ByteWriter()  // a valid frame whose payload is not a record (bad UTF-8 key)
        var payload = ByteWriter()
        payload.u8(1); payload.u64(1); payload.raw([UInt8](repeating: 0, count: 16)); payload.u8(1)
        payload.blob([0xFF, 0xFE]); payload.u8(0); payload.blob([0x41])
        junk.u32(UInt32(payload.bytes.count)); junk.u32(CRC32C.checksum(payload.bytes)); junk.raw(payload.bytes)
        let bytes = RecordFrame.encode(sample[0]) + hostile.bytes + junk.bytes + RecordFrame.encode(sample[1])
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        #expect(scan.records == [sample[0], sample[1]])
        #expect(scan.skipped.count == 2)
        var generator = SeededRandom(seed: TestSeed.draw("JournalTests"))
        let random = (0..<10_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        _ = random.withUnsafeBytes { RecordFrame.scan($0) }
    }

    @Test func ownJournalTornTailIsCutOnOpenAndAppendsContinue() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        var store: DeviceStore? = try openStore(root, device: "a")
        try store!.set(.string("kept"), forKey: "k1")
        try store!.set(.string("torn"), forKey: "k2")
        store!.close()
        store = nil
        let folder = root.sub("sync/devices").path
        let device = try #require(Files.list(folder).first)
        let segment = folder + "/" + device + "/" + DeviceFolder.segmentName(1)
        let size = try #require(try Files.read(segment)).count
        truncate(segment, off_t(size - 3))
        let reopened = try openStore(root, device: "a")
        #expect(reopened.value(forKey: "k1") == .string("kept"))
        #expect(reopened.value(forKey: "k2") == nil)
        try reopened.set(.string("after"), forKey: "k3")
        reopened.close()
        let again = try openStore(root, device: "a")
        #expect(again.values == ["k1": .string("kept"), "k3": .string("after")])
        again.close()
    }
}
