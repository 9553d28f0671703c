import Foundation
@testable import KVStore

/// Random values of all eight types, nested, with the values that break
/// conversions over-represented: NaNs with payloads, -0.0, infinities,
/// subnormals, dates with sub-microsecond fractions and outside any calendar,
/// control characters and astral scalars in strings.
struct RandomValues {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    mutating func value(depth: Int = 0) -> PropertyListValue {
        switch Int.random(in: 0..<(depth < 3 ? 8 : 6), using: &random) {
        case 0: .string(string())
        case 1: .integer(random.chance(0.5) ? Int64(bitPattern: random.next()) : Int64.random(in: -1000...1000, using: &random))
        case 2: .real(real())
        case 3: .bool(random.chance(0.5))
        case 4: .date(date())
        case 5: .data(Data((0..<Int.random(in: 0...24, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        case 6: .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth: depth + 1) })
        default:
            .dictionary(Dictionary((0..<Int.random(in: 0...4, using: &random)).map { _ in (StoreKey(string()), value(depth: depth + 1)) },
                                   uniquingKeysWith: { first, _ in first }))
        }
    }

    mutating func real() -> Double {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: Double(bitPattern: random.next())  // NaNs with payloads, subnormals, anything
        case 1: random.pick([-0.0, 0.0, .infinity, -.infinity, .nan, -.nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                             Double(nan: 0x5_1234, signaling: true), Double(nan: 1, signaling: false)])
        case 2, 3: Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 1000
        default: Double.random(in: -1e6...1e6, using: &random)
        }
    }

    mutating func date() -> Date {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: Date(timeIntervalSinceReferenceDate: Double(bitPattern: random.next()))
        case 1: Date(timeIntervalSinceReferenceDate: random.pick([0.1, -0.0, .nan, .infinity, 1e-9, -1e300]))
        // 2023-2026, as issue 9.1 measured, at any fraction of a second.
        default: Date(timeIntervalSinceReferenceDate: Double.random(in: 694_224_000...788_918_400, using: &random))
        }
    }

    mutating func string() -> String {
        let ranges: [ClosedRange<UInt32>] = [0x20...0x7E, 0x20...0x7E, 0x00...0x1F, 0xA0...0x24F, 0x4E00...0x4FFF, 0x1F300...0x1F6FF]
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            text.append(Unicode.Scalar(UInt32.random(in: random.pick(ranges), using: &random))!)
        }
        return String(text)
    }
}

extension PropertyListValue {
    /// The value's exact bits: the journal's encoding, which keeps every bit.
    var exactBits: [UInt8] { RecordCodec.valueBytes(self) }

    /// The value as a key's file keeps it: a date that is the key's value to
    /// the millisecond (as its text reads back), a real every bit, an array or
    /// dictionary what its XML document keeps.
    var asItsFileKeepsIt: PropertyListValue {
        switch self {
        case let .date(date): .date(DateText.parse(DateText.format(date))!)
        case .array, .dictionary: asXMLKeepsIt
        default: self
        }
    }

    /// The value as an XML property list keeps it: every date, at any depth, at
    /// the start of the second it falls in; every NaN as the usual one; all else exact.
    var asXMLKeepsIt: PropertyListValue {
        switch self {
        case let .date(date):
            let interval = date.timeIntervalSinceReferenceDate
            // A date with no calendar date is written as its number, which kvfs reads back (DateText).
            guard interval.isFinite, abs(date.timeIntervalSince1970) < DateText.calendarRange else { return .date(DateText.parse(DateText.format(date))!) }
            // `+ 0` makes the -0.0 of a date in the first second after 2001 the 0.0 its text reads back as.
            return .date(Date(timeIntervalSinceReferenceDate: interval.rounded(.down) + 0))
        case let .real(number) where number.isNaN: return .real(.nan)
        case let .array(elements): return .array(elements.map(\.asXMLKeepsIt))
        case let .dictionary(entries): return .dictionary(entries.mapValues(\.asXMLKeepsIt))
        default: return self
        }
    }
}
