extension Unicode.Scalar {
    /// Whether this is a control character (Unicode's category Cc: C0, DEL
    /// and C1): what a terminal may act on and a log must not take as text.
    public var isControlCharacter: Bool { properties.generalCategory == .control }
}

extension String {
    /// Whether the text holds a control character (``Unicode/Scalar/isControlCharacter``).
    public var containsControlCharacters: Bool { unicodeScalars.contains(where: \.isControlCharacter) }

    /// The text with every control character but the tab spelled out
    /// (`\u{1b}`, `\u{a}`), for text that reaches a terminal or a log from
    /// elsewhere: a planted escape sequence is never passed on, and a newline
    /// never starts a forged log line.
    public var controlCharactersSpelledOut: String {
        guard unicodeScalars.contains(where: Self.isSpelledOut) else { return self }
        return unicodeScalars.map { Self.isSpelledOut($0) ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
    }

    private static func isSpelledOut(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "\t" && scalar.isControlCharacter
    }
}
