import Foundation

extension PropertyListValue {
    /// The value converted to `type` when nothing is lost (what `setfattr -n
    /// user.kvfs.type` does), or nil when the conversion would lose or invent data.
    ///
    /// Scalars convert through their text (`"42"` ↔ 42, `"yes"` → true);
    /// integer ↔ real only when exact; bool ↔ integer as 0 and 1; data ↔ string
    /// when the bytes are UTF-8; data or a string holding a property-list
    /// document becomes its array or dictionary; anything becomes data as its file form.
    public func converted(to type: PropertyListType) -> PropertyListValue? {
        if type == self.type { return self }
        switch (self, type) {
        case let (.integer(number), .real):
            let real = Double(number)
            return Int64(exactly: real) == number ? .real(real) : nil
        case let (.real(number), .integer):
            return Int64(exactly: number).map(PropertyListValue.integer)
        case let (.bool(flag), .integer):
            return .integer(flag ? 1 : 0)
        case let (.integer(number), .bool):
            return number == 0 || number == 1 ? .bool(number == 1) : nil
        case let (.data(bytes), .string):
            return String(validating: bytes, as: UTF8.self).map(PropertyListValue.string)
        case let (.string(text), .data):
            return .data(Data(text.utf8))
        case (_, .data):
            return .data(Data(FileForm.encode(self)))
        case let (.string(text), .array), let (.string(text), .dictionary):
            return Self.document(Data(text.utf8), of: type)
        case let (.data(bytes), .array), let (.data(bytes), .dictionary):
            return Self.document(bytes, of: type)
        case (.string, _), (.data, _):
            return text.flatMap { FileForm.parse($0, as: type) }
        case (_, .string):
            return text.map(PropertyListValue.string)
        default:
            return nil
        }
    }

    /// A scalar's text without the file form's newline.
    private var text: String? {
        switch self {
        case let .string(text): text
        case let .data(bytes): String(validating: bytes, as: UTF8.self)?.trimmingCharacters(in: .whitespacesAndNewlines)
        case .integer, .real, .bool, .date: String(decoding: FileForm.encode(self).dropLast(), as: UTF8.self)
        case .array, .dictionary: nil
        }
    }

    private static func document(_ bytes: Data, of type: PropertyListType) -> PropertyListValue? {
        guard let value = try? PropertyListValue(propertyListData: bytes), value.type == type else { return nil }
        return value
    }
}
