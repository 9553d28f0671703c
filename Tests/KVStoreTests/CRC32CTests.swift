import Testing
@testable import KVStore

/// CRC32C's slicing-by-8 gives the Castagnoli CRC: the standard check values, and a byte-at-a-time CRC's
/// result at every length from 0 to 80 bytes and every alignment of the start, where the eight-byte steps
/// and the bytes left after them split differently.
@Suite("Journal: CRC-32C")
struct CRC32CTests {
    /// The CRC a byte at a time, bit by bit: what the tables must agree with.
    private static func bitwise(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    @Test("the check values: \"123456789\" and RFC 3720's (iSCSI) 32-byte vectors")
    func checkValues() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test("every length from 0 to 80 bytes, starting at each of 8 alignments, matches the CRC bit by bit")
    func everyLengthAndAlignment() {
        let bytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 167 &+ 13) }
        bytes.withUnsafeBytes { all in
            for start in 0..<8 {
                for length in 0...80 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])
                    #expect(CRC32C.checksum(slice) == Self.bitwise(slice), "\(length) bytes from offset \(start)")
                }
            }
        }
    }
}
