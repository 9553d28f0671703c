import Foundation
import Testing
@testable import KVStore

/// The journal's record format: version 3 carries what each write's writer
/// had seen (its bases), versions 2 and 3 keep every value's exact bits,
/// versions 1 and 2 are still read, and no payload costs more than its size to decode.
@Suite("Journal record format")
struct RecordCodecTests {
    let device = DeviceID.random()

    func decode(_ payload: [UInt8]) -> JournalRecord? { payload.withUnsafeBytes { RecordCodec.decode($0) } }

    func versionOne(key: String, tag: UInt8, _ value: (inout ByteWriter) -> Void) -> [UInt8] {
        versionOnePut(device: device, key: key, tag: tag, value)
    }

    @Test func versionOneRecordsAreStillRead() throws {
        let date = versionOne(key: "d", tag: 4) { $0.u64(1_795_342_502.25.bitPattern) }
        #expect(decode(date)?.changes.first?.value == .date(Date(timeIntervalSince1970: 1_795_342_502.25)))
        let nested = PropertyListValue.dictionary(["a": .array([.integer(1), .string("x")])])
        let collection = versionOne(key: "c", tag: 7) { $0.blob(nested.propertyListData(format: .binary)) }
        #expect(decode(collection)?.changes.first?.value == nested)
        let foundation = try PropertyListSerialization.data(fromPropertyList: ["z": [true]], format: .binary, options: 0)
        #expect(decode(versionOne(key: "f", tag: 7) { $0.blob(foundation) })?.changes.first?.value == .dictionary(["z": .array([.bool(true)])]))
        let set = versionOne(key: "s", tag: 6) { $0.blob(HostileDocumentTests.setDocument) }
        #expect(decode(set) == nil)
        let expanding = versionOne(key: "e", tag: 6) { $0.blob(HostileDocumentTests.expandingDocument) }
        #expect(decode(expanding) == nil)
    }

    @Test func theFormatWrittenKeepsExactBits() {
        let values: [PropertyListValue] = [
            .date(Date(timeIntervalSinceReferenceDate: 0.1)), .real(-0.0), .real(Double(nan: 99, signaling: true)),
            .array([.date(Date(timeIntervalSinceReferenceDate: -1e-9)), .dictionary(["k": .real(-.nan), "": .data(Data())])]),
        ]
        for value in values {
            let record = JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: 9, counter: 1), device: device),
                                       operation: .put(key: "k", value: value))
            let payload = RecordCodec.encode(record)
            #expect(payload.first == 3)
            #expect(RecordCodec.valueBytes(decode(payload)!.changes[0].value!) == RecordCodec.valueBytes(value))
        }
    }

    @Test("a record fits in the capacity worked out for it, so it is encoded in one allocation")
    func capacityHoldsEveryKind() {
        let stamp = Stamp(time: HLCTimestamp(milliseconds: 9, counter: 1), device: device)
        let earlier = Stamp(time: HLCTimestamp(milliseconds: 8, counter: 0), device: .random())
        let nested = PropertyListValue.dictionary(["é": .array([.integer(1), .data(Data(count: 300)), .date(Date())]), "": .bool(false)])
        let records = [
            JournalRecord(stamp: stamp, operation: .put(key: "k", value: .string(String(repeating: "v", count: 64))),
                          rank: earlier, bases: [.version(earlier)]),
            JournalRecord(stamp: stamp, operation: .put(key: "n", value: nested), rank: earlier, bases: [.version(earlier)]),
            JournalRecord(stamp: stamp, operation: .remove(key: "ключ"), bases: [.version(earlier)]),
            JournalRecord(stamp: stamp, operation: .rename(from: "a", to: "b", value: .real(1.5)), rank: earlier,
                          bases: [.version(earlier), .version(earlier)]),
            JournalRecord(stamp: stamp, operation: .snapshotEnd(count: 7)),
            JournalRecord(stamp: stamp, operation: .batch(puts: [JournalRecord.Put(key: "a", value: .integer(1), rank: earlier),
                                                                 JournalRecord.Put(key: "b", value: nested, rank: earlier)]),
                          bases: [.version(earlier), .nothing]),
        ]
        for record in records {
            let payload = RecordCodec.encode(record)
            #expect(payload.count <= RecordCodec.capacity(for: record), "\(record.operation)")
            // Built in place, the frame is the header (length, checksum) before the same payload.
            var writer = ByteWriter()
            RecordFrame.append(record, to: &writer)
            #expect(writer.bytes == RecordFrame.frame(payload))
        }
    }

    @Test("each kind of record is written as the byte every earlier version wrote, after a 25-byte header")
    func recordKindsKeepTheirBytes() {
        let stamp = Stamp(time: HLCTimestamp(milliseconds: 9, counter: 1), device: device)
        let kinds: [(JournalRecord.Operation, UInt8)] = [
            (.put(key: "k", value: .integer(1)), 1), (.remove(key: "k"), 2),
            (.rename(from: "a", to: "b", value: .bool(true)), 3), (.snapshotEnd(count: 7), 4),
            (.batch(puts: [JournalRecord.Put(key: "a", value: .integer(1)), JournalRecord.Put(key: "b", value: .string("b"))]), 5),
        ]
        for (operation, byte) in kinds {
            let payload = RecordCodec.encode(JournalRecord(stamp: stamp, operation: operation))
            #expect(payload[25] == byte, "\(operation)")
            #expect(decode(payload)?.operation == operation)
        }
        #expect(RecordCodec.kindOffset == 25 && RecordFrame.headerSize == 8)
    }

    @Test("version 3 carries each changed key's base, before the rank; a rename has two")
    func basesRoundTrip() {
        let stamp = Stamp(time: HLCTimestamp(milliseconds: 9, counter: 1), device: device)
        let older = Stamp(time: HLCTimestamp(milliseconds: 7, counter: 0), device: .random())
        let records = [
            JournalRecord(stamp: stamp, operation: .put(key: "k", value: .integer(1)), rank: older, bases: [.version(older)]),
            JournalRecord(stamp: stamp, operation: .remove(key: "k"), bases: [.nothing]),
            JournalRecord(stamp: stamp, operation: .rename(from: "a", to: "b", value: .bool(true)), bases: [.version(older), .unknown]),
            JournalRecord(stamp: stamp, operation: .snapshotEnd(count: 2)),
        ]
        for record in records {
            #expect(decode(RecordCodec.encode(record)) == record)
        }
        #expect(RecordCodec.encode(records[1]).suffix(1) == [1])  // the tag of "nothing", last
    }

    @Test("a batch keeps each key's value, rank and base; a hostile batch (empty, a key twice, a late rank, a count past its bytes) is refused")
    func batchRecords() {
        let stamp = Stamp(time: HLCTimestamp(milliseconds: 9, counter: 1), device: device)
        let earlier = Stamp(time: HLCTimestamp(milliseconds: 3, counter: 0), device: device)
        let later = Stamp(time: HLCTimestamp(milliseconds: 10, counter: 0), device: device)
        let puts = [JournalRecord.Put(key: "a", value: .integer(1), rank: earlier), JournalRecord.Put(key: "b", value: .array([.string("x"), .bool(false)]))]
        let record = JournalRecord(stamp: stamp, operation: .batch(puts: puts), bases: [.version(earlier), .nothing])
        #expect(decode(RecordCodec.encode(record)) == record)
        #expect(record.changesWithBases.map(\.rank) == [earlier, nil])
        #expect(record.change(0) == JournalRecord(stamp: stamp, operation: .put(key: "a", value: .integer(1)), rank: earlier, bases: [.version(earlier)]))
        #expect(record.change(1) == JournalRecord(stamp: stamp, operation: .put(key: "b", value: puts[1].value), bases: [.nothing]))
        for hostile in [[JournalRecord.Put](), [puts[0], puts[0]], [JournalRecord.Put(key: "a", value: .integer(1), rank: later)]] {
            #expect(decode(RecordCodec.encode(JournalRecord(stamp: stamp, operation: .batch(puts: hostile)))) == nil, "\(hostile)")
        }
        var payload = Array(RecordCodec.encode(JournalRecord(stamp: stamp, operation: .batch(puts: [puts[1]]))))
        payload.replaceSubrange(26..<30, with: [0xFF, 0xFF, 0xFF, 0x0F])  // a count of 268 million, in a few bytes
        #expect(decode(payload) == nil)
        var ranked = RecordCodec.encode(record)
        ranked += RecordCodec.encode(JournalRecord(stamp: stamp, operation: .put(key: "k", value: .integer(1)), rank: earlier)).suffix(24)
        #expect(decode(ranked) == nil, "a batch ranks its values in its entries: a rank after its bases is refused")
    }

    @Test("what a version counts against the retention is its record's frame in a snapshot, to the byte")
    func versionSizes() {
        let stamp = Stamp(time: HLCTimestamp(milliseconds: 9, counter: 1), device: device)
        let earlier = Stamp(time: HLCTimestamp(milliseconds: 3, counter: 0), device: device)
        let values: [PropertyListValue?] = [nil, .string(""), .string("héllo"), .integer(-1), .real(.nan), .bool(true), .date(Date()),
                                            .data(Data([1, 2, 3])), .array([.integer(1), .array([])]), .dictionary(["é": .string("x"), "b": .dictionary([:])])]
        for value in values {
            for (base, rank) in [(WriteBase.unknown, nil), (.nothing, earlier), (.version(earlier), nil), (.version(earlier), earlier)] where value != nil || rank == nil {
                let key: StoreKey = "a longer kéy"
                let record = JournalRecord(stamp: stamp, operation: value.map { .put(key: key, value: $0) } ?? .remove(key: key), rank: rank, bases: [base])
                #expect(RetentionRule.charge(key: key, value: value, base: base, rank: rank) == RecordFrame.encode(record).count, "\(String(describing: value)) \(base)")
            }
        }
    }

    @Test("a version-2 record is still read, its base unknown: never a conflict")
    func versionTwoRecordsReadAsBaseUnknown() throws {
        let stamp = Stamp(time: HLCTimestamp(milliseconds: 9, counter: 1), device: device)
        let rank = Stamp(time: HLCTimestamp(milliseconds: 3, counter: 0), device: device)
        for operation: JournalRecord.Operation in [.put(key: "k", value: .string("v")), .remove(key: "k"),
                                                   .rename(from: "a", to: "b", value: .integer(2))] {
            var payload = ByteWriter()  // as version 2 laid it out: the kind's fields, then the rank
            payload.u8(2)
            payload.u64(stamp.time.rawValue)
            payload.raw(device.bytes)
            payload.u8(RecordKind(operation).rawValue)
            switch operation {
            case let .put(key, value): payload.string(key.string); RecordValueCoding.encode(value, into: &payload)
            case let .remove(key): payload.string(key.string)
            case let .rename(from, to, value): payload.string(from.string); payload.string(to.string); RecordValueCoding.encode(value, into: &payload)
            case .snapshotEnd, .batch: break
            }
            if case .put = operation {
                payload.u64(rank.time.rawValue)
                payload.raw(rank.device.bytes)
            }
            let record = try #require(decode(payload.bytes), "\(operation)")
            #expect(record.operation == operation)
            #expect(record.bases == Array(repeating: .unknown, count: operation.keys.count))
            #expect(record.bases.allSatisfy { !$0.isConcurrent(with: rank) })
        }
    }

    @Test("a base that is not older than its record, or an unknown tag, refuses the record")
    func hostileBasesAreRefused() {
        let stamp = Stamp(time: HLCTimestamp(milliseconds: 9, counter: 1), device: device)
        let later = Stamp(time: HLCTimestamp(milliseconds: 10, counter: 0), device: device)
        #expect(decode(RecordCodec.encode(JournalRecord(stamp: stamp, operation: .remove(key: "k"), bases: [.version(later)]))) == nil)
        #expect(decode(RecordCodec.encode(JournalRecord(stamp: stamp, operation: .remove(key: "k"), bases: [.version(stamp)]))) == nil)
        var payload = RecordCodec.encode(JournalRecord(stamp: stamp, operation: .remove(key: "k"), bases: [.nothing]))
        payload[payload.count - 1] = 3
        #expect(decode(payload) == nil)
        #expect(decode(Array(payload.dropLast())) == nil)  // a version-3 record without its base
    }

    @Test func hostileCountsAndDepthsAreRefusedCheaply() {
        // A claimed count of 2³² − 1 elements reserves nothing: it is checked against the bytes left.
        let huge = versionOne(key: "h", tag: 6) { $0.u32(UInt32.max) }.replacingVersion(2)
        #expect(decode(huge) == nil)
        let deep = versionOne(key: "d", tag: 6) { writer in
            for _ in 0..<300 { writer.u32(1); writer.u8(6) }
            writer.u32(0)
        }.replacingVersion(2)
        #expect(decode(deep) == nil)
        let duplicate = versionOne(key: "x", tag: 7) { writer in
            writer.u32(2)
            for _ in 0..<2 { writer.string("same"); writer.u8(3); writer.u8(1) }
        }.replacingVersion(2)
        #expect(decode(duplicate) == nil)
    }

    /// Issue 7.3: a frame header every 9 bytes, each claiming the rest of the
    /// file, each looking like a record; checking each was quadratic.
    static func checksumBomb(size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        for unit in stride(from: 0, to: size - 9, by: 9) {
            withUnsafeBytes(of: UInt32(size - unit - 8).littleEndian) { bytes.replaceSubrange(unit..<unit + 4, with: $0) }
            bytes[unit + 4] = 0xA5
            bytes[unit + 6] = 1  // the kind byte of the candidate three units back
            bytes[unit + 8] = 1  // a readable version
        }
        return bytes
    }

    /// Sixteen times the bytes take about sixteen times as long (256, were it
    /// quadratic): the ratio of two sizes' times (256 KiB and 4 MiB, the
    /// largest frame), each the best of five runs so that a loaded machine's
    /// pauses do not count, stays under 64, four times from either. The
    /// margin is wide because the smaller size fits a core's cache and a
    /// loaded machine slows the larger one more (a ratio of 9.3 for 4x the
    /// bytes was seen at a load average of 10).
    @Test func aChecksumBombIsScannedInLinearTime() {
        let valid = RecordFrame.encode(JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: 1, counter: 0), device: device),
                                                     operation: .put(key: "k", value: .integer(1))))
        let times = [1 << 18, RecordFrame.maxPayload].map { size -> Duration in
            let bytes = valid + Self.checksumBomb(size: size)
            var scan: RecordFrame.Scan?
            let best = (1...5).map { _ in ContinuousClock().measure { scan = bytes.withUnsafeBytes { RecordFrame.scan($0) } } }.min()!
            #expect(scan?.records.count == 1)
            #expect(scan?.unreadable == valid.count..<bytes.count)
            return best
        }
        let ratio = times[1] / times[0]
        #expect(ratio < 64, "16× the bytes took \(ratio)× as long (\(times[0]), then \(times[1])): not linear")
    }
}

/// A version-1 put record's payload, byte for byte as the old writer laid it
/// out: `key` = a value of type `tag` whose bytes `value` writes.
func versionOnePut(device: DeviceID, key: String, tag: UInt8, _ value: (inout ByteWriter) -> Void) -> [UInt8] {
    var writer = ByteWriter()
    writer.u8(1)
    writer.u64(HLCTimestamp(milliseconds: 5, counter: 0).rawValue)
    writer.raw(device.bytes)
    writer.u8(1)
    writer.string(key)
    writer.u8(tag)
    value(&writer)
    return writer.bytes
}

/// A payload framed as a journal holds it.
func framed(_ payload: [UInt8]) -> [UInt8] {
    var frame = ByteWriter()
    frame.u32(UInt32(payload.count))
    frame.u32(CRC32C.checksum(payload))
    frame.raw(payload)
    return frame.bytes
}

private extension Array where Element == UInt8 {
    func replacingVersion(_ version: UInt8) -> [UInt8] {
        var copy = self
        copy[0] = version
        return copy
    }
}
