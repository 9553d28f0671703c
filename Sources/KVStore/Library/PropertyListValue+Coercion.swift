import Foundation

/// Apple's getter coercions (the table on ``KeyValueStore``), in one place.
extension PropertyListValue {
    /// The Foundation object Apple's store returns: numbers and Booleans as
    /// `NSNumber`, at any depth.
    ///
    /// Not ``foundationObject``, whose `Int64` would not cast `as? Int` on
    /// Linux, nor its `Bool` `as? Int`: an `NSNumber` casts to any numeric type
    /// that holds it exactly (a Boolean one to `Bool` and to 1 or 0), as code
    /// written for Apple's store expects. A Boolean is the CFBoolean singleton,
    /// so writing it back stores a bool again (``converting(_:)``).
    var appleObject: Any {
        switch self {
        case let .integer(number): NSNumber(value: number)
        case let .real(number): NSNumber(value: number)
        case let .bool(flag): NSNumber(value: flag)
        case let .array(values): values.map(\.appleObject)
        case let .dictionary(values): values.stringKeyed(\.appleObject)
        case .string, .date, .data: foundationObject
        }
    }

    /// `string(forKey:)`: strings, and numbers and Booleans as text (`true` as "1", like NSNumber).
    var coercedString: String? {
        switch self {
        case let .string(text): text
        case let .integer(number): String(number)
        case let .real(number): number.description
        case let .bool(flag): flag ? "1" : "0"
        case .date, .data, .array, .dictionary: nil
        }
    }

    /// `longLong(forKey:)`: reals truncated toward zero and clamped, text by NSString's `longLongValue`.
    var coercedInt64: Int64 {
        switch self {
        case let .integer(number): number
        case let .real(number):
            if number.isNaN { 0 }
            else if number >= 0x1p63 { .max }
            else if number < -0x1p63 { .min }
            else { Int64(number) }
        case let .bool(flag): flag ? 1 : 0
        case let .string(text): NSString(string: text).longLongValue
        case .date, .data, .array, .dictionary: 0
        }
    }

    /// `double(forKey:)`: integers converted, text by NSString's `doubleValue`.
    var coercedDouble: Double {
        switch self {
        case let .real(number): number
        case let .integer(number): Double(number)
        case let .bool(flag): flag ? 1 : 0
        case let .string(text): NSString(string: text).doubleValue
        case .date, .data, .array, .dictionary: 0
        }
    }

    /// `bool(forKey:)`: numbers when non-zero, text by NSString's `boolValue` ("true", "YES", "1").
    var coercedBool: Bool {
        switch self {
        case let .bool(flag): flag
        case let .integer(number): number != 0
        case let .real(number): number != 0
        case let .string(text): NSString(string: text).boolValue
        case .date, .data, .array, .dictionary: false
        }
    }
}
