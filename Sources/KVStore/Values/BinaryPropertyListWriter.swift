import Foundation

/// Writes a value as a binary property list (`bplist00`) that Apple's readers
/// and ``BinaryPropertyListReader`` read back bit for bit: reals and dates as
/// 8-byte floats (NaN payloads and -0.0 kept), ASCII strings as bytes and
/// others as UTF-16, dictionary keys in byte order so one value has one form.
/// Objects are not shared: the document is no larger than the value.
enum BinaryPropertyListWriter {
    static func document(_ value: PropertyListValue) -> [UInt8] {
        var writer = Writer(referenceSize: byteWidth(objectCount(value)))
        _ = writer.add(value)
        return writer.finish()
    }

    /// Objects the value takes: one per value and one per dictionary key.
    private static func objectCount(_ value: PropertyListValue) -> Int {
        switch value {
        case let .array(elements): 1 + elements.reduce(0) { $0 + objectCount($1) }
        case let .dictionary(entries): 1 + entries.values.reduce(0) { $0 + 1 + objectCount($1) }
        default: 1
        }
    }

    /// Bytes an unsigned number up to `limit` takes: 1, 2, 4 or 8.
    private static func byteWidth(_ limit: Int) -> Int {
        limit <= 0xFF ? 1 : limit <= 0xFFFF ? 2 : limit <= 0xFFFF_FFFF ? 4 : 8
    }

    private struct Writer {
        let referenceSize: Int
        /// Each object's bytes, by object number (the top object is 0).
        var objects: [[UInt8]] = []

        init(referenceSize: Int) { self.referenceSize = referenceSize }

        /// Adds the value (and what it holds) and returns its object number.
        mutating func add(_ value: PropertyListValue) -> Int {
            let index = objects.count
            objects.append([])
            var bytes: [UInt8]
            switch value {
            case let .bool(flag): bytes = [flag ? 0x09 : 0x08]
            case let .integer(number): bytes = Self.integer(number)
            case let .real(number): bytes = [0x23] + Self.bigEndian(number.bitPattern, 8)
            case let .date(date): bytes = [0x33] + Self.bigEndian(date.timeIntervalSinceReferenceDate.bitPattern, 8)
            case let .data(data): bytes = Self.header(0x4, data.count) + data
            case let .string(text): bytes = Self.string(text)
            case let .array(elements):
                let children = elements.map { add($0) }
                bytes = Self.header(0xA, children.count) + children.flatMap { Self.bigEndian(UInt64($0), referenceSize) }
            case let .dictionary(entries):
                let sorted = entries.sorted { $0.key < $1.key }
                let keys = sorted.map { add(.string($0.key.string)) }
                let values = sorted.map { add($0.value) }
                bytes = Self.header(0xD, sorted.count) + (keys + values).flatMap { Self.bigEndian(UInt64($0), referenceSize) }
            }
            objects[index] = bytes
            return index
        }

        /// The document: header, objects, offset table, trailer.
        func finish() -> [UInt8] {
            var document = Array("bplist00".utf8)
            var offsets: [Int] = []
            for object in objects {
                offsets.append(document.count)
                document += object
            }
            let tableOffset = document.count
            let offsetSize = byteWidth(tableOffset)
            for offset in offsets { document += Self.bigEndian(UInt64(offset), offsetSize) }
            document += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            document += Self.bigEndian(UInt64(objects.count), 8) + Self.bigEndian(0, 8) + Self.bigEndian(UInt64(tableOffset), 8)
            return document
        }

        static func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }

        /// Non-negative integers in the fewest of 1, 2, 4 bytes (read as
        /// unsigned); the rest in 8 (read as signed), as Apple writes them.
        static func integer(_ number: Int64) -> [UInt8] {
            guard number >= 0, number <= 0xFFFF_FFFF else { return [0x13] + bigEndian(UInt64(bitPattern: number), 8) }
            let size = byteWidth(Int(number))
            return [0x10 | UInt8(size.trailingZeroBitCount)] + bigEndian(UInt64(number), size)
        }

        /// A marker with a count: in its low nibble below 15, else as an integer object after it.
        static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
            count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0x0F] + integer(Int64(count))
        }

        static func string(_ text: String) -> [UInt8] {
            if text.utf8.allSatisfy({ $0 < 0x80 }) { return header(0x5, text.utf8.count) + Array(text.utf8) }
            let units = Array(text.utf16)
            return header(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
    }
}
