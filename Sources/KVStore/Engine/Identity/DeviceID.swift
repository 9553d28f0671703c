import Foundation

/// A device's stable identity: 16 random bytes, written as 32 lowercase hex
/// digits (its folder's name in the sync directory).
public struct DeviceID: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The 32 hex digits.
    public let hex: String

    /// A new random id.
    public static func random() -> DeviceID {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return DeviceID(bytes: bytes)
    }

    /// The id for 16 bytes.
    public init(bytes: [UInt8]) {
        // By table, not String(format:): every journal record read makes one,
        // and formatting was most of the cost of reading a journal.
        hex = String(decoding: bytes.flatMap { [Self.hexDigits[Int($0 >> 4)], Self.hexDigits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The id a folder name spells, or nil when it is not 32 lowercase hex digits
    /// (so `..`, `.DS_Store` or junk never count as a device).
    public init?(hex: String) {
        guard hex.utf8.count == 32, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            return nil
        }
        self.hex = hex
    }

    /// The 16 bytes.
    public var bytes: [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: 32, by: 2).map { index in
            UInt8(hexDigit(digits[index]) << 4 | hexDigit(digits[index + 1]))
        }
    }

    private func hexDigit(_ byte: UInt8) -> UInt8 { byte <= 0x39 ? byte - 0x30 : byte - 0x61 + 10 }

 /// The id in lower-case hex, as device folders are named.
    public var description: String { hex }
 /// Ordered by hex, the tie-break between equal clocks.
    public static func < (a: Self, b: Self) -> Bool { a.hex < b.hex }
}
