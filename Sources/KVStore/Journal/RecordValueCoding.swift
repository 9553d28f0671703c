import Foundation

/// A value inside a journal record: `u8 type` (the index in
/// ``PropertyListType/allCases``), then
/// - string, data: `u32 length | bytes` (UTF-8 for a string);
/// - integer: `u64` two's complement; real: `u64` bits; bool: `u8` 0 or 1;
/// - date: `u64` bits of `timeIntervalSinceReferenceDate` (version 2;
///   version 1 held `timeIntervalSince1970`);
/// - array: `u32 count | values` (version 2); dictionary: `u32 count |
///   (key as a string, value)…`, keys in byte order (version 2). Version 1
///   held either as a `u32`-length binary property list.
///
/// Exact: every bit of every value, NaN payloads and -0.0 included, is kept.
/// One value has one encoding, which the merge also uses as a total order.
enum RecordValueCoding {
    static func encode(_ value: PropertyListValue, into writer: inout ByteWriter) {
        writer.u8(UInt8(PropertyListType.allCases.firstIndex(of: value.type)!))
        switch value {
        case let .string(text): writer.string(text)
        case let .integer(number): writer.u64(UInt64(bitPattern: number))
        case let .real(number): writer.u64(number.bitPattern)
        case let .bool(flag): writer.u8(flag ? 1 : 0)
        case let .date(date): writer.u64(date.timeIntervalSinceReferenceDate.bitPattern)
        case let .data(bytes): writer.blob(bytes)
        case let .array(elements):
            writer.u32(UInt32(elements.count))
            for element in elements { encode(element, into: &writer) }
        case let .dictionary(entries):
            writer.u32(UInt32(entries.count))
            for (key, element) in entries.sorted(by: { $0.key < $1.key }) {
                writer.string(key.string)
                encode(element, into: &writer)
            }
        }
    }

    /// The bytes `encode(_:into:)` writes for `value`.
    static func size(of value: PropertyListValue) -> Int {
        1 + {
            switch value {
            case let .string(text): 4 + text.utf8.count
            case .integer, .real, .date: 8
            case .bool: 1
            case let .data(bytes): 4 + bytes.count
            case let .array(elements): 4 + elements.reduce(0) { $0 + size(of: $1) }
            case let .dictionary(entries): 4 + entries.reduce(0) { $0 + 4 + $1.key.string.utf8.count + size(of: $1.value) }
            }
        }()
    }

    /// The value at the reader, of record format `version`, charged to `budget`;
    /// throws for bytes that are not one.
    static func decode(_ reader: inout ByteReader, version: UInt8, depth: Int,
                       budget: inout DecodingBudget) throws(PropertyListDecodingError) -> PropertyListValue {
        guard let tag = reader.u8(), Int(tag) < PropertyListType.allCases.count else { throw malformed }
        try budget.spend()
        switch PropertyListType.allCases[Int(tag)] {
        case .string:
            guard let text = reader.string() else { throw malformed }
            try budget.spend(nodes: 0, bytes: text.utf8.count)
            return .string(text)
        case .integer: return .integer(Int64(bitPattern: try field(reader.u64())))
        case .real: return .real(Double(bitPattern: try field(reader.u64())))
        case .bool:
            let flag = try field(reader.u8())
            guard flag <= 1 else { throw malformed }
            return .bool(flag == 1)
        case .date:
            let seconds = Double(bitPattern: try field(reader.u64()))
            return .date(version == 1 ? Date(timeIntervalSince1970: seconds) : Date(timeIntervalSinceReferenceDate: seconds))
        case .data:
            let bytes = try field(reader.blob())
            try budget.spend(nodes: 0, bytes: bytes.count)
            return .data(Data(bytes))
        case .array where version == 1, .dictionary where version == 1:
            return try embeddedPropertyList(&reader, budget: &budget)
        case .array:
            let count = try elementCount(&reader, depth: depth, budget: budget)
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try decode(&reader, version: version, depth: depth + 1, budget: &budget)) }
            return .array(elements)
        case .dictionary:
            let count = try elementCount(&reader, depth: depth, budget: budget)
            var entries: [StoreKey: PropertyListValue] = [:]
            entries.reserveCapacity(count)
            for _ in 0..<count {
                guard let key = reader.string() else { throw malformed }
                try budget.spend(nodes: 1, bytes: key.utf8.count)
                let value = try decode(&reader, version: version, depth: depth + 1, budget: &budget)
                guard entries.updateValue(value, forKey: StoreKey(key)) == nil else { throw malformed }
            }
            return .dictionary(entries)
        }
    }

    private static var malformed: PropertyListDecodingError { PropertyListDecodingError(reason: "malformed value in a journal record") }

    private static func field<T>(_ value: T?) throws(PropertyListDecodingError) -> T {
        guard let value else { throw malformed }
        return value
    }

    /// A collection's count, no larger than the bytes left could hold (every
    /// element takes at least 2), so a hostile count reserves nothing.
    private static func elementCount(_ reader: inout ByteReader, depth: Int, budget: DecodingBudget) throws(PropertyListDecodingError) -> Int {
        try budget.enter(depth: depth + 1)
        let count = Int(try field(reader.u32()))
        guard count <= (reader.bytes.count - reader.offset) / 2 else { throw malformed }
        return count
    }

    /// Version 1's array or dictionary: a binary property list, decoded within what is left of the budget.
    private static func embeddedPropertyList(_ reader: inout ByteReader, budget: inout DecodingBudget) throws(PropertyListDecodingError) -> PropertyListValue {
        let bytes = try field(reader.blob())
        var limits = budget.limits
        limits.maxNodes -= budget.nodes - 1
        limits.maxContentBytes -= budget.contentBytes
        let value = try BinaryPropertyListReader.value(bytes, limits: limits)
        guard value.type == .array || value.type == .dictionary else { throw malformed }
        return value
    }
}
