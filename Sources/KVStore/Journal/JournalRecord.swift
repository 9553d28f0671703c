import Foundation

/// One entry of a device's journal (or snapshot): what changed, stamped by who and when.
public struct JournalRecord: Equatable, Sendable {
    /// What a record does.
    public enum Operation: Equatable, Sendable {
        /// `key` now holds `value`.
        case put(key: String, value: PropertyListValue)
        /// `key` is gone (a tombstone).
        case remove(key: String)
        /// `from` is gone and `to` holds `value`, in one step.
        case rename(from: String, to: String, value: PropertyListValue)
        /// Closes a snapshot file: it holds exactly `count` records before this one.
        case snapshotEnd(count: UInt32)
    }

    /// When and by whom.
    public var stamp: Stamp
    /// What.
    public var operation: Operation
    /// Where the value a put or rename stores stands in the quota rule's
    /// oldest-first order, when that is not `stamp`: an overwrite of a
    /// visible key keeps the place the key held, so it never needs room the
    /// old value did not take (``QuotaRule``).
    public var rank: Stamp?

    /// A record from its parts.
    public init(stamp: Stamp, operation: Operation, rank: Stamp? = nil) {
        self.stamp = stamp
        self.operation = operation
        self.rank = rank
    }

    /// The key changes this record makes: each key with its new value, or nil for removed.
    public var changes: [(key: String, value: PropertyListValue?)] {
        switch operation {
        case let .put(key, value): [(key, value)]
        case let .remove(key): [(key, nil)]
        case let .rename(from, to, value): [(from, nil), (to, value)]
        case .snapshotEnd: []
        }
    }
}

/// The record payload's binary form (inside a frame, which carries length and checksum).
enum RecordCodec {
    /// The format version, the first byte of every payload.
    static let version: UInt8 = 1

    static func encode(_ record: JournalRecord) -> [UInt8] {
        var writer = ByteWriter()
        writer.u8(version)
        writer.u64(record.stamp.time.rawValue)
        writer.raw(record.stamp.device.bytes)
        switch record.operation {
        case let .put(key, value):
            writer.u8(1)
            writer.string(key)
            encode(value, into: &writer)
        case let .remove(key):
            writer.u8(2)
            writer.string(key)
        case let .rename(from, to, value):
            writer.u8(3)
            writer.string(from)
            writer.string(to)
            encode(value, into: &writer)
        case let .snapshotEnd(count):
            writer.u8(4)
            writer.u32(count)
        }
        if let rank = record.rank {  // an optional trailer: records without one read as before
            writer.u64(rank.time.rawValue)
            writer.raw(rank.device.bytes)
        }
        return writer.bytes
    }

    /// The record, or nil for a payload that is not one (a newer version, junk,
    /// bad UTF-8, an over-long key): such a record is skipped, never trusted.
    static func decode(_ payload: UnsafeRawBufferPointer) -> JournalRecord? {
        var reader = ByteReader(payload)
        guard reader.u8() == version, let time = reader.u64(), let device = reader.raw(16),
              HLCTimestamp(rawValue: time) <= .latest, let kind = reader.u8() else { return nil }
        let stamp = Stamp(time: HLCTimestamp(rawValue: time), device: DeviceID(bytes: Array(device)))
        let operation: JournalRecord.Operation
        switch kind {
        case 1:
            guard let key = reader.key(), let value = decodeValue(&reader) else { return nil }
            operation = .put(key: key, value: value)
        case 2:
            guard let key = reader.key() else { return nil }
            operation = .remove(key: key)
        case 3:
            guard let from = reader.key(), let to = reader.key(), from != to, let value = decodeValue(&reader) else { return nil }
            operation = .rename(from: from, to: to, value: value)
        case 4:
            guard let count = reader.u32() else { return nil }
            operation = .snapshotEnd(count: count)
        default:
            return nil
        }
        var rank: Stamp?
        if !reader.isAtEnd {  // a rank: only for a value, and never later than the record
            guard kind == 1 || kind == 3, let time = reader.u64(), let device = reader.raw(16) else { return nil }
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
        encode(value, into: &writer)
        return writer.bytes
    }

    private static func encode(_ value: PropertyListValue, into writer: inout ByteWriter) {
        writer.u8(UInt8(PropertyListType.allCases.firstIndex(of: value.type)!))
        switch value {
        case let .string(text): writer.string(text)
        case let .integer(number): writer.u64(UInt64(bitPattern: number))
        case let .real(number): writer.u64(number.bitPattern)
        case let .bool(flag): writer.u8(flag ? 1 : 0)
        case let .date(date): writer.u64(date.timeIntervalSince1970.bitPattern)
        case let .data(bytes): writer.blob(bytes)
        case .array, .dictionary: writer.blob(value.propertyListData(format: .binary))
        }
    }

    private static func decodeValue(_ reader: inout ByteReader) -> PropertyListValue? {
        guard let tag = reader.u8(), Int(tag) < PropertyListType.allCases.count else { return nil }
        switch PropertyListType.allCases[Int(tag)] {
        case .string: return reader.string().map(PropertyListValue.string)
        case .integer: return reader.u64().map { .integer(Int64(bitPattern: $0)) }
        case .real: return reader.u64().map { .real(Double(bitPattern: $0)) }
        case .bool:
            guard let flag = reader.u8(), flag <= 1 else { return nil }
            return .bool(flag == 1)
        case .date: return reader.u64().map { .date(Date(timeIntervalSince1970: Double(bitPattern: $0))) }
        case .data: return reader.blob().map { .data(Data($0)) }
        case .array, .dictionary:
            guard let bytes = reader.blob(), let value = try? PropertyListValue(propertyListData: Data(bytes)),
                  value.type == .array || value.type == .dictionary else { return nil }
            return value
        }
    }
}

private extension ByteReader {
    /// A key: valid UTF-8 within the key length limit.
    mutating func key() -> String? {
        guard let key = string(), (try? QuotaUsage.checkKey(key)) != nil else { return nil }
        return key
    }
}
