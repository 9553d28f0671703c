/// Reals as text: the shortest decimal that reads back the same bits; `nan`,
/// `inf`, `-inf`; and, so that every Double has a text that reads back as
/// itself, `-0.0` and NaNs other than the usual one as `-nan`, `nan(0xP)`,
/// `snan(0xP)` (P the payload below the quiet bit, in hex, as C's `strtod` reads it).
enum RealText {
    /// `inf`/`-inf` in a scalar file; an XML property list spells them as Apple does.
    static func format(_ number: Double, infinity: (positive: String, negative: String) = ("inf", "-inf")) -> String {
        if number.isInfinite { return number < 0 ? infinity.negative : infinity.positive }
        guard number.isNaN else { return number.description }
        if number.bitPattern == Double.nan.bitPattern { return "nan" }
        let payload = number.significandBitPattern & (quietBit - 1)
        let name = (number.sign == .minus ? "-" : "") + (number.isSignalingNaN ? "snan" : "nan")
        return payload == 0 ? name : name + "(0x" + String(payload, radix: 16) + ")"
    }

    /// Reads what `format` writes, any decimal or hexadecimal float Swift
    /// reads, and the spellings of infinity people and Apple use, in any case.
    static func parse(_ text: String) -> Double? {
        let lower = text.lowercased()
        switch lower {
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default: break
        }
        if let nan = parseNaN(lower) { return nan }
        guard let number = Double(lower), !number.isNaN else { return nil }
        return number
    }

    private static let quietBit: UInt64 = 1 << 51

    /// `[-]nan`, `[-]nan(0xP)`, `[-]snan(0xP)`; nil for anything else.
    private static func parseNaN(_ text: String) -> Double? {
        var rest = Substring(text)
        let negative = rest.hasPrefix("-")
        if negative { rest = rest.dropFirst() }
        let signaling = rest.hasPrefix("snan")
        guard signaling || rest.hasPrefix("nan") else { return nil }
        rest = rest.dropFirst(signaling ? 4 : 3)
        var payload: UInt64 = 0
        if !rest.isEmpty {
            guard rest.hasPrefix("(0x"), rest.hasSuffix(")"), let value = UInt64(rest.dropFirst(3).dropLast(), radix: 16),
                  value < quietBit else { return nil }
            payload = value
        }
        if signaling && payload == 0 { return nil }  // that would be infinity
        let bits = (negative ? 1 << 63 : 0) | Double.infinity.bitPattern | (signaling ? 0 : quietBit) | payload
        return Double(bitPattern: bits)
    }
}

/// Booleans as text: written `true`/`false`; read from true/false/yes/no/1/0 in any case.
enum BoolText {
    static func parse(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "1": true
        case "false", "no", "0": false
        default: nil
        }
    }
}
