import Testing
@testable import KVStore

@Suite("Byte coding")
struct ByteCodingTests {
    @Test("zeros appends as many zero bytes as asked, after what the writer holds, on either side of its 4 KiB page and across several")
    func zerosCrossItsPage() {
        for count in [0, 1, 4095, 4096, 4097, 2 * 4096 + 3] {
            var writer = ByteWriter()
            writer.u8(0xAB)
            writer.zeros(count)
            writer.u8(0xCD)
            #expect(writer.bytes == [0xAB] + [UInt8](repeating: 0, count: count) + [0xCD], "\(count) zeros")
        }
    }
}
