import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Dates as ISO 8601 text in UTC: to the millisecond, with a fraction only
/// when it is not zero (a key's own file), or to the second (inside an XML
/// property list, see ``Precision``).
///
/// Exactly what text keeps: `format` rounds to the nearest millisecond, or
/// down to the second, and `parse` gives `Date(timeIntervalSince1970: S + F)`
/// where S is the whole seconds the text names and F the fraction it spells,
/// each rounded once to a Double; so a date read from text and written again
/// gives the same text. (A date's exact bits live in the journal; only its
/// text is rounded.)
///
/// Written by hand rather than with Foundation's `Date.ISO8601FormatStyle`,
/// because that style does not do what docs/files.md promises: it refuses
/// `2026-11-22` and `2026-11-22T10:15Z` (one style parses one layout), prints
/// `.000` on every date once fractions are on, and truncates where kvfs rounds.
public enum DateText {
    /// Beyond this many seconds from 1970 (about 950 million years, so that a
    /// year has at most 9 digits), or for infinities and NaN, there is no
    /// calendar date: the text is the real number.
    static let calendarRange = 3e16

    /// How much of a date's time its text keeps.
    public enum Precision: Sendable {
        /// To the nearest millisecond: a date that is a key's own value.
        case milliseconds
        /// Down to the second the date falls in, before 1970 and 2001 too,
        /// as Apple's CoreFoundation writes `<date>` (`CFAbsoluteTimeGetGregorianDate`
        /// floors): the only `<date>` that Apple's, Python's (plistlib) and
        /// libplist's XML parsers read is `YYYY-MM-DDTHH:MM:SSZ`.
        case seconds
    }

    /// `2026-11-22T10:15:02Z`, or `2026-11-22T10:15:02.345Z` with milliseconds.
    public static func format(_ date: Date) -> String { format(date, precision: .milliseconds) }

    /// The date's text to `precision`: `2026-11-22T10:15:02.345Z`, or `2026-11-22T10:15:02Z` to the second.
    public static func format(_ date: Date, precision: Precision) -> String {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < calendarRange else { return RealText.format(interval) }
        var seconds: Double, millis = 0
        switch precision {
        case .milliseconds:
            seconds = interval.rounded(.down)
            millis = Int(((interval - seconds) * 1000).rounded())
            if millis == 1000 { seconds += 1; millis = 0 }
        case .seconds:
            // Rounded down where the date's bits are (seconds from 2001): moving a date a
            // hair before a second to 1970 first could round it onto that second.
            seconds = date.timeIntervalSinceReferenceDate.rounded(.down) + Date.timeIntervalBetween1970AndReferenceDate
        }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let year = Int(parts.tm_year) + 1900
        var text = (year < 0 ? "-" : "") + padded(abs(year), 4) + "-" + padded(Int(parts.tm_mon) + 1, 2) + "-" + padded(Int(parts.tm_mday), 2)
        text += "T" + padded(Int(parts.tm_hour), 2) + ":" + padded(Int(parts.tm_min), 2) + ":" + padded(Int(parts.tm_sec), 2)
        if millis != 0 {
            var fraction = padded(millis, 3)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    private static func padded(_ number: Int, _ width: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Reads `[±]YYYY-MM-DD`, optionally followed by `THH:MM[:SS[.fff…]]` (or a
    /// space for the `T`) and `Z`, `±HH:MM`, `±HHMM` or no zone (UTC); and the
    /// real number `format` writes for a date with no calendar date.
    public static func parse(_ text: String) -> Date? {
        if let date = parseCalendarDate(text) { return date }
        guard let seconds = RealText.parse(text), !(seconds.isFinite && abs(seconds) < calendarRange) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    private static func parseCalendarDate(_ text: String) -> Date? {
        var scanner = TextScanner(Array(text.utf8))
        let negative = scanner.take(0x2D)
        if !negative { _ = scanner.take(0x2B) }
        guard let magnitude = scanner.number(minDigits: 4, maxDigits: 9), scanner.take(0x2D),
              let month = scanner.number(2), scanner.take(0x2D), let day = scanner.number(2) else { return nil }
        let year = negative ? -magnitude : magnitude
        var hour = 0, minute = 0, second = 0, offset = 0
        var fraction = 0.0
        if !scanner.isAtEnd {
            guard scanner.take(0x54) || scanner.take(0x20), let h = scanner.number(2), scanner.take(0x3A),
                  let m = scanner.number(2), h < 24, m < 60 else { return nil }
            (hour, minute) = (h, m)
            if scanner.take(0x3A) {
                guard let s = scanner.number(2), s < 61 else { return nil }
                second = s
                if scanner.take(0x2E) || scanner.take(0x2C) {
                    guard let digits = scanner.digits(), !digits.isEmpty, let value = Double("0." + digits) else { return nil }
                    fraction = value
                }
            }
            if scanner.take(0x5A) {
            } else if !scanner.isAtEnd {
                let sign = scanner.take(0x2D) ? -1 : scanner.take(0x2B) ? 1 : 0
                guard sign != 0, let zoneHours = scanner.number(2) else { return nil }
                _ = scanner.take(0x3A)
                guard let zoneMinutes = scanner.number(2), zoneHours < 24, zoneMinutes < 60 else { return nil }
                offset = sign * (zoneHours * 3600 + zoneMinutes * 60)
            }
        }
        guard scanner.isAtEnd, let seconds = secondsSince1970(year: year, month: month, day: day) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds + hour * 3600 + minute * 60 + second - offset) + fraction)
    }

    /// Midnight UTC of a calendar day, or nil when there is no such day (February 30th).
    private static func secondsSince1970(year: Int, month: Int, day: Int) -> Int? {
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        var seconds = timegm(&parts)
        var check = tm()
        guard gmtime_r(&seconds, &check) != nil, check.tm_mday == Int32(day), check.tm_mon == Int32(month - 1) else { return nil }
        return Int(seconds)
    }
}

/// Steps through ASCII text byte by byte, for the date parser.
private struct TextScanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { index == bytes.count }

    /// Consumes `byte` if it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// The run of decimal digits here (possibly empty), consumed.
    mutating func digits() -> String? {
        let start = index
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A number of exactly `count` digits (more may follow).
    mutating func number(_ count: Int) -> Int? {
        guard index + count <= bytes.count, bytes[index..<index + count].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        defer { index += count }
        return Int(String(decoding: bytes[index..<index + count], as: UTF8.self))
    }

    /// A number of `minDigits` to `maxDigits` digits.
    mutating func number(minDigits: Int, maxDigits: Int) -> Int? {
        let start = index
        guard let text = digits(), (minDigits...maxDigits).contains(text.count) else {
            index = start
            return nil
        }
        return Int(text)
    }
}
