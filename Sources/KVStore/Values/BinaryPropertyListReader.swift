import Foundation

/// Reads Apple's binary property-list format (`bplist00`) within ``DecodingLimits``.
///
/// The checks on the trailer and the offset table are CoreFoundation's
/// (`__CFBinaryPlistGetTopLevelInfo` in CFBinaryPList.c): sizes that do not
/// overflow, an offset table that exactly fills the space before the trailer,
/// every offset inside the object table, references that fit the object count.
/// Like CoreFoundation it decodes each object once and reuses it for every
/// further reference, and refuses a reference to an object on its own path (a
/// cycle). Unlike it, every reuse is charged the object's unfolded size, so
/// a document of shared references cannot unfold past the limits.
///
/// Of the format's types, kvfs stores the eight of a property list; a null,
/// set, ordered set, UID or URL is refused with a reason. Integers are signed
/// 64-bit: a 16-byte integer (Apple's form for unsigned values past
/// `Int64.max`) is read when it fits in `Int64` and refused otherwise.
enum BinaryPropertyListReader {
    private static let trailerSize = 32

    /// Whether the bytes start like a binary property list (`bplist0` and a
    /// version digit, as CoreFoundation accepts).
    static func hasMagic(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 8 && bytes.prefix(7).elementsEqual("bplist0".utf8)
    }

    /// The document's top object.
    static func value(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(PropertyListDecodingError) -> PropertyListValue {
        var document = try Document(bytes)
        var budget = DecodingBudget(limits)
        return try document.object(document.topObject, depth: 0, budget: &budget)
    }

    private static func fail(_ reason: String) -> PropertyListDecodingError {
        PropertyListDecodingError(reason: "not a valid binary property list (\(reason))")
    }

    /// One document: its layout, checked, and what has been decoded of it.
    private struct Document {
        let bytes: UnsafeRawBufferPointer
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let tableOffset: Int
        /// Each object decoded so far, with what its unfolding costs.
        private var decoded: [Int: (value: PropertyListValue, nodes: Int, bytes: Int)] = [:]
        /// The objects on the path being decoded: a reference to one is a cycle.
        private var onPath: Set<Int> = []

        init(_ bytes: UnsafeRawBufferPointer) throws(PropertyListDecodingError) {
            self.bytes = bytes
            guard bytes.count >= 8 + 1 + trailerSize else { throw fail("too short") }
            let trailer = bytes.count - trailerSize
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            let objects = Self.bigEndian(bytes, at: trailer + 8, size: 8)
            let top = Self.bigEndian(bytes, at: trailer + 16, size: 8)
            let table = Self.bigEndian(bytes, at: trailer + 24, size: 8)
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else { throw fail("bad integer sizes in the trailer") }
            // Each check below bounds what the next relies on, so no arithmetic overflows.
            guard table >= 9, table < UInt64(trailer) else { throw fail("offset table outside the document") }
            guard objects >= 1, objects <= UInt64(trailer) / UInt64(offsetSize),
                  table + objects * UInt64(offsetSize) == UInt64(trailer) else {
                throw fail("offset table does not fill the space before the trailer")
            }
            guard top < objects else { throw fail("top object out of range") }
            if referenceSize < 8, objects > UInt64(1) << (8 * referenceSize) { throw fail("references too small for the object count") }
            objectCount = Int(objects)
            topObject = Int(top)
            tableOffset = Int(table)
            for index in 0..<objectCount {
                let offset = Self.bigEndian(bytes, at: tableOffset + index * offsetSize, size: offsetSize)
                guard offset >= 8, offset < table else { throw fail("object offset out of range") }
            }
        }

        /// An unsigned big-endian integer of `size` bytes (1 to 8) at `offset`, which the caller checked.
        static func bigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for byte in bytes[offset..<offset + size] { value = value << 8 | UInt64(byte) }
            return value
        }

        private func offset(of object: Int) -> Int {
            Int(Self.bigEndian(bytes, at: tableOffset + object * offsetSize, size: offsetSize))
        }

        /// `count` bytes at `start`, which must lie in the object table.
        private func span(_ start: Int, _ count: Int) throws(PropertyListDecodingError) -> UnsafeRawBufferPointer {
            guard count >= 0, start <= tableOffset, count <= tableOffset - start else { throw fail("object runs past the object table") }
            return UnsafeRawBufferPointer(rebasing: bytes[start..<start + count])
        }

        /// The object `index`, decoded (or taken from an earlier decoding) and charged to `budget`.
        mutating func object(_ index: Int, depth: Int, budget: inout DecodingBudget) throws(PropertyListDecodingError) -> PropertyListValue {
            if let known = decoded[index] {
                try budget.spend(nodes: known.nodes, bytes: known.bytes)
                return known.value
            }
            guard onPath.insert(index).inserted else { throw fail("an object contains itself") }
            defer { onPath.remove(index) }
            let before = (budget.nodes, budget.contentBytes)
            let value = try decode(at: offset(of: index), depth: depth, budget: &budget)
            decoded[index] = (value, budget.nodes - before.0, budget.contentBytes - before.1)
            return value
        }

        private mutating func decode(at start: Int, depth: Int, budget: inout DecodingBudget) throws(PropertyListDecodingError) -> PropertyListValue {
            let marker = bytes[start]
            let low = Int(marker & 0x0F)
            switch marker >> 4 {
            case 0x0 where marker == 0x08 || marker == 0x09:
                try budget.spend()
                return .bool(marker == 0x09)
            case 0x1:
                try budget.spend()
                return .integer(try integer(at: start + 1, sizeExponent: low))
            case 0x2 where low == 2 || low == 3:
                try budget.spend()
                let field = try span(start + 1, 1 << low)
                let bits = Self.bigEndian(field, at: 0, size: field.count)
                return .real(low == 2 ? Double(Float(bitPattern: UInt32(bits))) : Double(bitPattern: bits))
            case 0x3 where marker == 0x33:
                try budget.spend()
                let field = try span(start + 1, 8)
                return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.bigEndian(field, at: 0, size: 8))))
            case 0x4:
                let (count, first) = try length(at: start, low: low)
                try budget.spend(bytes: count)
                return .data(Data(try span(first, count)))
            case 0x5:
                let (count, first) = try length(at: start, low: low)
                try budget.spend(bytes: count)
                let field = try span(first, count)
                guard field.allSatisfy({ $0 < 0x80 }) else { throw fail("non-ASCII byte in an ASCII string") }
                return .string(String(decoding: field, as: UTF8.self))
            case 0x6:
                let (units, first) = try length(at: start, low: low)
                guard units <= tableOffset / 2 else { throw fail("object runs past the object table") }
                let field = try span(first, units * 2)
                try budget.spend(bytes: units * 2)
                let codeUnits = (0..<units).map { UInt16(field[2 * $0]) << 8 | UInt16(field[2 * $0 + 1]) }
                return .string(String(decoding: codeUnits, as: UTF16.self))  // a lone surrogate becomes U+FFFD
            case 0xA:
                let (count, first) = try length(at: start, low: low)
                let references = try referenceList(first, count)
                try budget.enter(depth: depth + 1)
                try budget.spend()
                var elements: [PropertyListValue] = []
                elements.reserveCapacity(count)
                for position in 0..<count {
                    elements.append(try object(reference(references, position), depth: depth + 1, budget: &budget))
                }
                return .array(elements)
            case 0xD:
                let (count, first) = try length(at: start, low: low)
                guard count <= tableOffset / 2 else { throw fail("object runs past the object table") }
                let references = try referenceList(first, 2 * count)
                try budget.enter(depth: depth + 1)
                try budget.spend()
                var entries: [StoreKey: PropertyListValue] = [:]
                entries.reserveCapacity(count)
                for position in 0..<count {
                    guard case let .string(key) = try object(reference(references, position), depth: depth + 1, budget: &budget) else {
                        throw fail("a dictionary key that is not a string")
                    }
                    // The same key again replaces the value, as CoreFoundation's readers do.
                    entries[StoreKey(key)] = try object(reference(references, count + position), depth: depth + 1, budget: &budget)
                }
                return .dictionary(entries)
            case 0x0 where marker == 0x00: throw PropertyListDecodingError(reason: "the property list holds a null, which kvfs does not store")
            case 0x8: throw PropertyListDecodingError(reason: "the property list holds a keyed-archiver UID, which kvfs does not store")
            case 0xB, 0xC: throw PropertyListDecodingError(reason: "the property list holds a set, which kvfs does not store")
            default: throw fail(String(format: "unknown object marker 0x%02X", marker))
            }
        }

        /// An integer field of 2^`sizeExponent` bytes: 1, 2 and 4 bytes are
        /// unsigned, 8 signed, 16 unsigned (Apple's rule for `bplist00`).
        private func integer(at start: Int, sizeExponent: Int) throws(PropertyListDecodingError) -> Int64 {
            guard sizeExponent <= 4 else { throw fail("integer wider than 16 bytes") }
            let field = try span(start, 1 << sizeExponent)
            switch field.count {
            case 8: return Int64(bitPattern: Self.bigEndian(field, at: 0, size: 8))
            case 16:
                let high = Self.bigEndian(field, at: 0, size: 8), low = Self.bigEndian(field, at: 8, size: 8)
                guard high == 0, let value = Int64(exactly: low) else {
                    throw PropertyListDecodingError(reason: "an integer past the signed 64-bit range, which kvfs does not store")
                }
                return value
            default: return Int64(Self.bigEndian(field, at: 0, size: field.count))
            }
        }

        /// A collection's, string's or data's count (in the marker's low nibble,
        /// or in an integer object after it when that is 0xF) and where its content starts.
        private func length(at start: Int, low: Int) throws(PropertyListDecodingError) -> (count: Int, first: Int) {
            guard low == 0xF else { return (low, start + 1) }
            let marker = try span(start + 1, 1)[0]
            guard marker >> 4 == 0x1, marker & 0x0F <= 3 else { throw fail("bad count") }
            let count = try integer(at: start + 2, sizeExponent: Int(marker & 0x0F))
            guard count >= 0, count <= tableOffset else { throw fail("object runs past the object table") }
            return (Int(count), start + 2 + (1 << Int(marker & 0x0F)))
        }

        private func referenceList(_ first: Int, _ count: Int) throws(PropertyListDecodingError) -> UnsafeRawBufferPointer {
            guard count <= tableOffset / referenceSize else { throw fail("object runs past the object table") }
            return try span(first, count * referenceSize)
        }

        private func reference(_ list: UnsafeRawBufferPointer, _ position: Int) throws(PropertyListDecodingError) -> Int {
            let object = Self.bigEndian(list, at: position * referenceSize, size: referenceSize)
            guard object < UInt64(objectCount) else { throw fail("reference to a missing object") }
            return Int(object)
        }
    }
}
