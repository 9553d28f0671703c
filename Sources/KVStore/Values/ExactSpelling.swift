import Foundation

/// How an XML property list keeps every bit of a real or a date whose text
/// does not: the element's text stays what every parser reads (a date to the
/// second, every NaN as `nan`: see ``XMLPropertyListWriter``), and an `exact`
/// attribute adds the value's bits, `<date exact="817035302.345">2026-11-22T10:15:02Z</date>`:
/// a real in its exact spelling (``RealText``, NaN payloads and signs
/// included), for a date its seconds since 2001-01-01 UTC, where a date's
/// bits are. Apple's Foundation, Python's plistlib and libplist read such a
/// document and ignore the attribute (tried: Foundation of Swift 6.3 on Linux,
/// Python 3.11, plistutil 2.2), while a date written with its fraction in the
/// text is refused by all three. kvfs reads the attribute when the text is
/// the one the exact value would be written as, so that a text edited by
/// hand wins over an attribute left behind.
enum ExactSpelling {
    /// The attribute's name.
    static let attribute = "exact"

    /// The `exact` attribute a real or date needs, or nil when its text keeps every bit (or it is neither).
    static func attribute(for value: PropertyListValue) -> String? {
        switch value {
        case let .real(number):
            return textKeeps(value) ? nil : RealText.format(number)
        case let .date(date):
            return textKeeps(value) ? nil : RealText.format(date.timeIntervalSinceReferenceDate)
        default:
            return nil
        }
    }

    /// The value an element stands for: `read`, the value its text says, or
    /// the one its `exact` attribute says when that one's text reads as `read`.
    static func value(_ read: PropertyListValue, exact: String?) -> PropertyListValue {
        guard let exact, let number = RealText.parse(exact) else { return read }
        let candidate: PropertyListValue
        switch read {
        case .real: candidate = .real(number)
        case .date: candidate = .date(Date(timeIntervalSinceReferenceDate: number))
        default: return read
        }
        return bits(of: textValue(of: candidate)) == bits(of: read) ? candidate : read
    }

    /// Whether a value's text in an XML property list reads back to its very bits.
    private static func textKeeps(_ value: PropertyListValue) -> Bool {
        bits(of: textValue(of: value)) == bits(of: value)
    }

    /// A real's bits, or a date's (its seconds since 2001).
    private static func bits(of value: PropertyListValue) -> UInt64? {
        switch value {
        case let .real(number): number.bitPattern
        case let .date(date): date.timeIntervalSinceReferenceDate.bitPattern
        default: nil
        }
    }

    /// What a real's or a date's text in an XML property list reads back as.
    private static func textValue(of value: PropertyListValue) -> PropertyListValue {
        switch value {
        case let .real(number):
            return RealText.parse(RealText.format(number, spelling: .propertyList)).map(PropertyListValue.real) ?? value
        case let .date(date):
            return DateText.parse(DateText.format(date, precision: .seconds)).map(PropertyListValue.date) ?? value
        default:
            return value
        }
    }
}
