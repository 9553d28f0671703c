/// Reals as text: the shortest decimal that reads back the same bits (`-0.0`
/// included); `nan`, `inf`, `-inf`; and, in a key's own file, so that every
/// Double has a text that reads back as itself, NaNs other than the usual one
/// as `-nan`, `nan(0xP)`, `snan(0xP)` (P the payload below the quiet bit, in
/// hex, as C's `strtod` reads it).
enum RealText {
    /// Where a real is written, which decides how infinities and NaNs are spelled.
    enum Spelling {
        /// A key's own file: every bit, `inf`/`-inf`, NaN payloads and signs.
        case exact
        /// Inside an XML property list: `+infinity`/`-infinity` as Apple writes
        /// them, and every NaN as `nan`, the only NaN that Apple's parser (and
        /// libplist's) reads; a NaN's sign and payload are lost there. Finite
        /// reals, -0.0 and subnormals included, are exact: CF's `strtod`, Python's
        /// `float` and libplist read the shortest decimal back to the same bits.
        case propertyList
    }

    static func format(_ number: Double, spelling: Spelling = .exact) -> String {
        if number.isInfinite {
            switch spelling {
            case .exact: return number < 0 ? "-inf" : "inf"
            case .propertyList: return number < 0 ? "-infinity" : "+infinity"
            }
        }
        guard number.isNaN else { return number.description }
        if spelling == .propertyList || number.bitPattern == Double.nan.bitPattern { return "nan" }
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
