import Foundation

extension PropertyListValue {
    /// The Foundation object for this value (`String`, `Int64`, `Double`, `Bool`,
    /// `Date`, `Data`, `[Any]`, `[String: Any]`), as NSUbiquitousKeyValueStore returns it.
    public var foundationObject: Any {
        switch self {
        case let .string(value): value
        case let .integer(value): value
        case let .real(value): value
        case let .bool(value): value
        case let .date(value): value
        case let .data(value): value
        case let .array(values): values.map(\.foundationObject)
        case let .dictionary(values): values.mapValues(\.foundationObject)
        }
    }

    /// The value for a Foundation property-list object, or nil when `object` is
    /// not one (or holds one that is not, at any depth).
    public init?(foundationObject object: Any) {
        switch object {
        case let value as String: self = .string(value)
        case let value as Bool where Self.isBoolean(object): self = .bool(value)
        case let value as NSNumber:
            guard let number = Self.number(value) else { return nil }
            self = number
        case let value as Int: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as Int32: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as UInt64:
            guard let number = Int64(exactly: value) else { return nil }  // a property-list integer is signed
            self = .integer(number)
        case let value as Double: self = .real(value)
        case let value as Float: self = .real(Double(value))
        case let value as Date: self = .date(value)
        case let value as Data: self = .data(value)
        case let values as [Any]:
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(values.count)
            for element in values {
                guard let value = PropertyListValue(foundationObject: element) else { return nil }
                elements.append(value)
            }
            self = .array(elements)
        case let values as [String: Any]:
            var entries: [String: PropertyListValue] = [:]
            for (key, element) in values {
                guard let value = PropertyListValue(foundationObject: element) else { return nil }
                entries[key] = value
            }
            self = .dictionary(entries)
        default: return nil
        }
    }

    private static func isBoolean(_ object: Any) -> Bool {
        if object is NSNumber { return Swift.type(of: object) == Bool.self }
        return object is Bool
    }

    /// An NSNumber's value by its encoding: on Linux a boolean NSNumber
    /// (`NSNumber(value: true)`) reports "c"; an unsigned one past Int64's
    /// range has no property-list form.
    private static func number(_ number: NSNumber) -> PropertyListValue? {
        switch String(cString: number.objCType) {
        case "c", "B": .bool(number.boolValue)
        case "d", "f": .real(number.doubleValue)
        case "Q", "L": Int64(exactly: number.uint64Value).map(PropertyListValue.integer)
        default: .integer(number.int64Value)
        }
    }

    /// Encodes the value as a property-list document.
    public func propertyListData(format: PropertyListSerialization.PropertyListFormat = .xml) -> Data {
        // Every PropertyListValue is a valid property list, so serialization cannot fail.
        (try? PropertyListSerialization.data(fromPropertyList: foundationObject, format: format, options: 0)) ?? Data()
    }

    /// Decodes a property-list document (XML or binary) of any top-level type.
    public init(propertyListData data: Data) throws(PropertyListDecodingError) {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw PropertyListDecodingError(reason: "not a valid property list (\(error.localizedDescription))")
        }
        guard let value = PropertyListValue(foundationObject: object) else {
            throw PropertyListDecodingError(reason: "the property list holds a type kvfs does not store")
        }
        self = value
    }
}

/// Why a property-list document was refused.
public struct PropertyListDecodingError: Error, Equatable, Sendable {
    /// What was wrong, for the user.
    public var reason: String
}
