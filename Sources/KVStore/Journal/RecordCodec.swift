import Foundation

/// The record payload's binary form (inside a frame, which carries length and checksum):
/// `u8 version | u64 HLC stamp | 16-byte device | u8 kind | fields | [rank]`,
/// little-endian; the optional rank (a put's or rename's place in the quota
/// rule's order, ``JournalRecord/rank``) is a `u64` stamp and a 16-byte device.
///
/// Version 2 (written now) holds every value natively and exactly
/// (``RecordValueCoding``): a date as its `timeIntervalSinceReferenceDate`
/// bits, which is what `Date` holds, so every reader decodes the very value
/// the writer kept. Version 1 (still read, so existing stores open) held a
/// date as `timeIntervalSince1970` bits, a conversion that moved 47% of dates
/// by up to 1.2e-7 s, and arrays and dictionaries as embedded binary property
/// lists, now read by the bounded ``BinaryPropertyListReader``.
enum RecordCodec {
    /// The format version written, the first byte of every payload.
    static let version: UInt8 = 2
    /// The versions read.
    static let readableVersions: ClosedRange<UInt8> = 1...2

    /// The sizes of the header's fields: version, HLC stamp, device (a
    /// ``DeviceID``'s bytes, as in a rank), and where the ``RecordKind`` follows them.
    static let versionSize = MemoryLayout<UInt8>.size
    static let stampSize = MemoryLayout<UInt64>.size
    static let deviceSize = 16
    static let kindOffset = versionSize + stampSize + deviceSize

    static func encode(_ record: JournalRecord) -> [UInt8] {
        var writer = ByteWriter()
        writer.u8(version)
        writer.u64(record.stamp.time.rawValue)
        writer.raw(record.stamp.device.bytes)
        writer.u8(RecordKind(record.operation).rawValue)
        switch record.operation {
        case let .put(key, value):
            writer.string(key.string)
            RecordValueCoding.encode(value, into: &writer)
        case let .remove(key):
            writer.string(key.string)
        case let .rename(from, to, value):
            writer.string(from.string)
            writer.string(to.string)
            RecordValueCoding.encode(value, into: &writer)
        case let .snapshotEnd(count):
            writer.u32(count)
        }
        if let rank = record.rank {  // an optional trailer: records without one read as before
            writer.u64(rank.time.rawValue)
            writer.raw(rank.device.bytes)
        }
        return writer.bytes
    }

    /// The record, or nil for a payload that is not one (a newer version, junk,
    /// bad UTF-8, an over-long key, a value past ``DecodingLimits``): such a
    /// record is skipped, never trusted. Costs time and memory linear in the payload.
    static func decode(_ payload: UnsafeRawBufferPointer, limits: DecodingLimits = .standard) -> JournalRecord? {
        var reader = ByteReader(payload)
        guard let version = reader.u8(), readableVersions.contains(version), let time = reader.u64(),
              let device = reader.raw(deviceSize), HLCTimestamp(rawValue: time) <= .latest,
              let kind = reader.u8().flatMap(RecordKind.init(rawValue:)) else { return nil }
        let stamp = Stamp(time: HLCTimestamp(rawValue: time), device: DeviceID(bytes: Array(device)))
        var budget = DecodingBudget(limits)
        func value() -> PropertyListValue? {
            try? RecordValueCoding.decode(&reader, version: version, depth: 0, budget: &budget)
        }
        let operation: JournalRecord.Operation
        switch kind {
        case .put:
            guard let key = reader.key(), let value = value() else { return nil }
            operation = .put(key: key, value: value)
        case .remove:
            guard let key = reader.key() else { return nil }
            operation = .remove(key: key)
        case .rename:
            guard let from = reader.key(), let to = reader.key(), from != to, let value = value() else { return nil }
            operation = .rename(from: from, to: to, value: value)
        case .snapshotEnd:
            guard let count = reader.u32() else { return nil }
            operation = .snapshotEnd(count: count)
        }
        var rank: Stamp?
        if !reader.isAtEnd {  // a rank: only for a value, and never later than the record
            guard kind.storesValue, let time = reader.u64(), let device = reader.raw(deviceSize) else { return nil }
            let place = Stamp(time: HLCTimestamp(rawValue: time), device: DeviceID(bytes: Array(device)))
            guard place < stamp else { return nil }
            rank = place
        }
        guard reader.isAtEnd else { return nil }
        return JournalRecord(stamp: stamp, operation: operation, rank: rank)
    }

    /// A value's bytes in this format: a total order on values, for the merge's tie-break.
    static func valueBytes(_ value: PropertyListValue) -> [UInt8] {
        var writer = ByteWriter()
        RecordValueCoding.encode(value, into: &writer)
        return writer.bytes
    }
}

private extension ByteReader {
    /// A key: valid UTF-8 within the key length limit.
    mutating func key() -> StoreKey? {
        guard let key = string().map({ StoreKey($0) }), (try? QuotaUsage.checkKey(key)) != nil else { return nil }
        return key
    }
}
