import Foundation

/// Appends little-endian fields to a byte buffer.
struct ByteWriter {
    var bytes: [UInt8] = []

    /// An empty writer.
    init() {}

    /// An empty writer with room for `capacity` bytes: a record's bytes are
    /// written in one allocation rather than grown through several.
    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func raw<C: Collection>(_ value: C) where C.Element == UInt8 { bytes.append(contentsOf: value) }
    /// A length-prefixed byte string.
    mutating func blob<C: Collection>(_ value: C) where C.Element == UInt8 {
        u32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }
    mutating func string(_ value: String) { blob(value.utf8) }

    /// Appends `count` zero bytes, copied from a page of them (a sealed record's padding and the room for
    /// its nonce and tag: `repeatElement`'s generic append wrote them one at a time).
    mutating func zeros(_ count: Int) {
        var left = count
        while left > 0 {
            let chunk = min(left, Self.zeroPage.count)
            Self.zeroPage.withUnsafeBytes { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<chunk])) }
            left -= chunk
        }
    }

    private static let zeroPage = [UInt8](repeating: 0, count: 4096)
}

/// Reads little-endian fields from bytes, failing (nil) rather than trapping on
/// short or hostile input.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }
    /// The bytes not read yet.
    var remaining: Int { bytes.count - offset }

    mutating func u8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() -> UInt16? {
        guard offset + 2 <= bytes.count else { return nil }
        defer { offset += 2 }
        return UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    mutating func u32() -> UInt32? {
        guard offset + 4 <= bytes.count else { return nil }
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func u64() -> UInt64? {
        guard offset + 8 <= bytes.count else { return nil }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func raw(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func blob() -> UnsafeRawBufferPointer? {
        guard let count = u32() else { return nil }
        return raw(Int(count))
    }

    /// A length-prefixed string; nil when it is not valid UTF-8.
    mutating func string() -> String? {
        guard let bytes = blob() else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
