/// CRC-32C (Castagnoli), the checksum LevelDB frames its log records with.
///
/// Slicing-by-8 (Intel's, as in LevelDB's portable crc32c): eight bytes a
/// step through eight tables, instead of a byte a step through one, whose
/// each lookup waits for the last. Every record read or written is
/// checksummed whole: a sealed one is twice a plain one's length, and the
/// one-byte loop was 1.2 µs of a sealed library write by perf
/// (docs/performance.md § What sealing costs).
enum CRC32C {
    /// `tables[k * 256 + b]`: the CRC register after byte `b` followed by `k` zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        tables.withUnsafeBufferPointer { tables in
            func entry(_ slice: Int, _ byte: UInt64) -> UInt32 { tables[slice &* 256 &+ Int(truncatingIfNeeded: byte & 0xFF)] }
            var offset = 0
            while offset &+ 8 <= bytes.count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) ^ UInt64(crc)
                crc = entry(7, word) ^ entry(6, word >> 8) ^ entry(5, word >> 16) ^ entry(4, word >> 24)
                    ^ entry(3, word >> 32) ^ entry(2, word >> 40) ^ entry(1, word >> 48) ^ entry(0, word >> 56)
                offset &+= 8
            }
            while offset < bytes.count {
                crc = entry(0, UInt64((crc ^ UInt32(bytes[offset])) & 0xFF)) ^ (crc >> 8)
                offset &+= 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
