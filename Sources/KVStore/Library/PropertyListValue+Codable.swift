import Foundation

/// Lets `Optional` say whether it is empty, for a generic `T` that may be one.
private protocol OptionalValue {
    var isNone: Bool { get }
}

extension Optional: OptionalValue {
    fileprivate var isNone: Bool { self == nil }
}

/// Codable values as property-list values, through Foundation's
/// PropertyListEncoder and PropertyListDecoder (so a struct becomes a
/// dictionary, a `Date` a date, `Data` data, exactly as on Apple platforms).
extension PropertyListValue {
    /// Encodes `value` as a property-list value (a struct or dictionary as a
    /// dictionary, an array as an array, a scalar as itself); `key` only names
    /// it in the error.
    ///
    /// The value travels wrapped in a one-element array, because the Linux
    /// encoder refuses a top-level scalar ("property list fragment"); binary
    /// format, because XML would drop a date's fraction of a second.
    public static func encoding<T: Encodable>(_ value: T, forKey key: StoreKey) throws(KVStoreError) -> PropertyListValue {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        do {
            guard case let .array(wrapped) = try PropertyListValue(propertyListData: try encoder.encode([value])),
                  let element = wrapped.first else {
                throw KVStoreError.invalidValue(key: key, reason: "\(T.self) did not encode to a value")
            }
            return element
        } catch let error as KVStoreError {
            throw error
        } catch {
            throw .invalidValue(key: key, reason: "cannot store \(T.self) as a property list: \(Self.describe(error))")
        }
    }

    /// Encodes `value` as ``encoding(_:forKey:)`` does, but an `Optional`
    /// that is `nil` gives nil (the key goes): how
    /// ``KeyValueStore/set(encodable:forKey:)`` and ObservableDefaults' optional properties store nil.
    public static func encoding<T: Encodable>(optional value: T, forKey key: StoreKey) throws(KVStoreError) -> PropertyListValue? {
        if let optional = value as? any OptionalValue, optional.isNone { return nil }
        return try encoding(value, forKey: key)
    }

    /// Decodes the value as `T`, or throws ``KVStoreError/invalidValue(key:reason:)`` saying what did not match;
    /// `key` only names it in the error.
    public func decoded<T: Decodable>(as type: T.Type, forKey key: StoreKey) throws(KVStoreError) -> T {
        do {
            let wrapped = PropertyListValue.array([self]).propertyListData(format: .binary)
            return try PropertyListDecoder().decode([T].self, from: wrapped)[0]
        } catch {
            throw .invalidValue(key: key, reason: "the stored \(self.type.rawValue) cannot be read as \(T.self): \(Self.describe(error))")
        }
    }

    /// A Codable error in a line: the innermost cause, at its path (without the wrapping array's index).
    private static func describe(_ error: any Error) -> String {
        let path: [any CodingKey], text: String
        switch error {
        case let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context),
             let DecodingError.keyNotFound(_, context), let DecodingError.dataCorrupted(context):
            if let cause = context.underlyingError { return describe(cause) }
            (path, text) = (context.codingPath, context.debugDescription)
        case let EncodingError.invalidValue(_, context):
            // The encoder wraps what the value threw in "Unable to encode the given top-level value".
            if let cause = context.underlyingError { return describe(cause) }
            (path, text) = (context.codingPath, context.debugDescription)
        default:
            return "\(error)"
        }
        let names = path.dropFirst().map { $0.intValue.map(String.init) ?? $0.stringValue }
        return names.isEmpty ? text : "at \(names.joined(separator: ".")): \(text)"
    }
}
