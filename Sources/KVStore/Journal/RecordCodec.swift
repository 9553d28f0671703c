import Foundation

/// The record payload's binary form (inside a frame, which carries length and checksum):
/// `u8 version | u64 HLC stamp | 16-byte device | u8 kind | fields | bases | [rank]`,
/// little-endian; the optional rank (a put's or rename's place in the quota
/// rule's order, ``JournalRecord/rank``) is a `u64` stamp and a 16-byte device.
///
/// Version 3 (written now) adds the bases (``JournalRecord/bases``): for each
/// key the kind changes (put and remove: one; rename: its source, then its
/// target; snapshot end: none), a `u8` tag, 0 unknown, 1 nothing, 2 a version,
/// which the stamp it names follows (`u64` time, 16-byte device). A base is
/// always older than its record: the writer's clock had passed it.
///
/// Version 2 holds every value natively and exactly (``RecordValueCoding``),
/// as version 3 does: a date as its `timeIntervalSinceReferenceDate` bits,
/// which is what `Date` holds, so every reader decodes the very value the
/// writer kept; its writes read as base unknown. Version 1 held a date as
/// `timeIntervalSince1970` bits, a conversion that moved 47% of dates by up
/// to 1.2e-7 s, and arrays and dictionaries as embedded binary property
/// lists, now read by the bounded ``BinaryPropertyListReader``.
/// Both are still read, so existing stores open.
enum RecordCodec {
    /// The format version written, the first byte of every payload.
    static let version: UInt8 = 3
    /// The versions read.
    static let readableVersions: ClosedRange<UInt8> = 1...3
    /// The first version whose records carry bases.
    static let basesVersion: UInt8 = 3

    /// The sizes of the header's fields: version, HLC stamp, device (a
    /// ``DeviceID``'s bytes, as in a rank), and where the ``RecordKind`` follows them.
    static let versionSize = MemoryLayout<UInt8>.size
    static let stampSize = MemoryLayout<UInt64>.size
    static let deviceSize = 16
    static let kindOffset = versionSize + stampSize + deviceSize

    static func encode(_ record: JournalRecord) -> [UInt8] {
        var writer = ByteWriter(capacity: capacity(for: record))
        encode(record, into: &writer)
        return writer.bytes
    }

    /// The most bytes `record`'s payload takes (its values' sizes exact, a
    /// base and a rank counted for every key), for a buffer that holds it
    /// without growing: a record is encoded in one allocation.
    static func capacity(for record: JournalRecord) -> Int {
        let stamp = stampSize + deviceSize
        let perKey = 4 + 1 + stamp + 1 + stamp  // the key's length, its base, a batch entry's rank
        func key(_ key: StoreKey) -> Int { perKey + key.string.utf8.count }
        let fields = switch record.operation {
        case let .put(name, value): key(name) + RecordValueCoding.size(of: value)
        case let .remove(name): key(name)
        case let .rename(from, to, value): key(from) + key(to) + RecordValueCoding.size(of: value)
        case .snapshotEnd: 4
        case let .batch(puts): puts.reduce(4) { $0 + key($1.key) + RecordValueCoding.size(of: $1.value) }
        }
        return kindOffset + 1 + fields + stamp
    }

    /// Appends `record`'s payload to `writer`.
    static func encode(_ record: JournalRecord, into writer: inout ByteWriter) {
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
        case let .batch(puts):
            writer.u32(UInt32(puts.count))
            for put in puts {
                writer.string(put.key.string)
                RecordValueCoding.encode(put.value, into: &writer)
                encode(put.rank, into: &writer)
            }
        }
        for index in 0..<record.operation.keys.count {
            encode(record.base(ofChange: index), into: &writer)
        }
        if let rank = record.rank {  // an optional trailer: records without one read as before
            encode(rank, into: &writer)
        }
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
        case .batch:
            guard let puts = batch(&reader, before: stamp, version: version, budget: &budget) else { return nil }
            operation = .batch(puts: puts)
        }
        var bases: [WriteBase] = []
        for _ in 0..<operation.keys.count {
            guard let base = version < basesVersion ? .unknown : decodeBase(&reader, before: stamp) else { return nil }
            bases.append(base)
        }
        var rank: Stamp?
        if !reader.isAtEnd {  // a rank: only for a value, and never later than the record
            guard kind.storesValue, let place = decodeStamp(&reader), place < stamp else { return nil }
            rank = place
        }
        guard reader.isAtEnd else { return nil }
        return JournalRecord(stamp: stamp, operation: operation, rank: rank, bases: bases)
    }

    /// A batch's entries: at least one, each key once, each rank earlier than
    /// the record's `stamp`; nil for bytes that are none. A count larger than
    /// the bytes left could hold (an entry takes at least 6) is refused before anything is read.
    private static func batch(_ reader: inout ByteReader, before stamp: Stamp, version: UInt8,
                              budget: inout DecodingBudget) -> [JournalRecord.Put]? {
        guard let count = reader.u32(), count > 0, Int(count) <= reader.remaining / 6 else { return nil }
        var puts: [JournalRecord.Put] = []
        var keys: Set<StoreKey> = []
        for _ in 0..<count {
            guard let key = reader.key(), keys.insert(key).inserted,
                  let value = try? RecordValueCoding.decode(&reader, version: version, depth: 0, budget: &budget) else { return nil }
            switch reader.u8() {
            case 0: puts.append(JournalRecord.Put(key: key, value: value))
            case 1:
                guard let rank = decodeStamp(&reader), rank < stamp else { return nil }
                puts.append(JournalRecord.Put(key: key, value: value, rank: rank))
            default: return nil
            }
        }
        return puts
    }

    /// A batch entry's rank: a tag, 0 for none (the record's stamp) or 1 for the stamp that follows it.
    private static func encode(_ rank: Stamp?, into writer: inout ByteWriter) {
        guard let rank else { return writer.u8(0) }
        writer.u8(1)
        encode(rank, into: &writer)
    }

    /// A stamp: its `u64` time and 16-byte device.
    private static func encode(_ stamp: Stamp, into writer: inout ByteWriter) {
        writer.u64(stamp.time.rawValue)
        writer.raw(stamp.device.bytes)
    }

    /// A stamp: its `u64` time and 16-byte device.
    private static func decodeStamp(_ reader: inout ByteReader) -> Stamp? {
        guard let time = reader.u64(), let device = reader.raw(deviceSize) else { return nil }
        return Stamp(time: HLCTimestamp(rawValue: time), device: DeviceID(bytes: Array(device)))
    }

    /// The tags of a base.
    private enum BaseTag: UInt8 {
        case unknown = 0, nothing = 1, version = 2
    }

    private static func encode(_ base: WriteBase, into writer: inout ByteWriter) {
        switch base {
        case .unknown: writer.u8(BaseTag.unknown.rawValue)
        case .nothing: writer.u8(BaseTag.nothing.rawValue)
        case let .version(stamp):
            writer.u8(BaseTag.version.rawValue)
            encode(stamp, into: &writer)
        }
    }

    /// A base of a record stamped `stamp`, or nil for bytes that are none (or a base not older than the record).
    private static func decodeBase(_ reader: inout ByteReader, before stamp: Stamp) -> WriteBase? {
        switch reader.u8().flatMap(BaseTag.init(rawValue:)) {
        case .unknown: return .unknown
        case .nothing: return .nothing
        case .version:
            guard let base = decodeStamp(&reader) else { return nil }
            return base < stamp ? .version(base) : nil
        case nil: return nil
        }
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
