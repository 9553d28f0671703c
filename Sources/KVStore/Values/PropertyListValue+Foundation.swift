import Foundation

extension PropertyListValue {
    /// The Foundation object for this value (`String`, `Int64`, `Double`, `Bool`,
    /// `Date`, `Data`, `[Any]`, `[String: Any]`), as NSUbiquitousKeyValueStore returns it.
    /// Of a dictionary's keys that differ only in normalization, it keeps the
    /// first in UTF-8 order (`Dictionary.stringKeyed(_:)`).
    public var foundationObject: Any {
        switch self {
        case let .string(value): value
        case let .integer(value): value
        case let .real(value): value
        case let .bool(value): value
        case let .date(value): value
        case let .data(value): value
        case let .array(values): values.map(\.foundationObject)
        case let .dictionary(values): values.stringKeyed(\.foundationObject)
        }
    }

    /// The value for a Foundation property-list object, or nil when `object` is
    /// not one (or holds one that is not, at any depth). See `converting(_:)`.
    public init?(foundationObject object: Any) {
        guard let value = try? Self.converting(object) else { return nil }
        self = value
    }

    /// The value for a Foundation property-list object, or why it is not one.
    ///
    /// Numbers keep their kind, as Apple's property lists keep them: `Bool` is
    /// a bool; every integer type (`Int8`/`CChar` included) an integer; `Double`,
    /// `Float` and `CGFloat` a real; an `NSNumber` whatever it holds. An unsigned
    /// integer above `Int64.max` is refused: the store's integers are signed
    /// 64-bit (as Apple's are, but for binary property lists, which may hold
    /// unsigned ones up to 2⁶⁴−1).
    static func converting(_ object: Any) throws(NotAPropertyListValue) -> PropertyListValue {
        // An NSNumber instance first: it would also cast to Bool, Int and Double.
        if Swift.type(of: object) is NSNumber.Type { return try number(object as! NSNumber) }
        switch object {
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as any BinaryInteger: return try integer(value)
        case let value as any BinaryFloatingPoint: return .real(Double(value))
        case let value as Date: return .date(value)
        case let value as Data: return .data(value)
        case let values as [Any]:
            var elements: [PropertyListValue] = []
            elements.reserveCapacity(values.count)
            for (index, element) in values.enumerated() {
                do { elements.append(try converting(element)) } catch { throw error.inside("[\(index)]") }
            }
            return .array(elements)
        case let values as [String: Any]:
            var entries: [StoreKey: PropertyListValue] = [:]
            for (key, element) in values {
                do { entries[StoreKey(key)] = try converting(element) } catch { throw error.inside("[\"\(key)\"]") }
            }
            return .dictionary(entries)
        default:
            let mirror = Mirror(reflecting: object)
            if mirror.displayStyle == .optional && mirror.children.isEmpty {
                throw NotAPropertyListValue(reason: "nil is not a property-list value")
            }
            throw NotAPropertyListValue(reason: "\(Swift.type(of: object)) is not a property-list type")
        }
    }

    private static func integer(_ value: some BinaryInteger) throws(NotAPropertyListValue) -> PropertyListValue {
        guard let number = Int64(exactly: value) else {
            throw NotAPropertyListValue(reason: "\(value) does not fit a property-list integer (at most \(Int64.max))")
        }
        return .integer(number)
    }

    /// An NSNumber's value. A Boolean one is one of the two CFBoolean
    /// singletons (swift-corelibs-foundation bridges `Bool` to kCFBooleanTrue
    /// or kCFBooleanFalse, as Darwin does), so identity tells it from a char
    /// one: both report the objCType "c".
    private static func number(_ number: NSNumber) throws(NotAPropertyListValue) -> PropertyListValue {
        if number === NSNumber(value: true) || number === NSNumber(value: false) { return .bool(number.boolValue) }
        switch String(cString: number.objCType) {
        case "d", "f": return .real(number.doubleValue)
        case "Q", "L": return try integer(number.uint64Value)
        default: return .integer(number.int64Value)
        }
    }
}

/// Why an object is not a property-list value: what, and where inside it.
struct NotAPropertyListValue: Error {
    /// What is wrong, e.g. "at [2]: NSNull is not a property-list type".
    var reason: String

    /// The same reason, one level further out: `step` is an index or a key.
    func inside(_ step: String) -> NotAPropertyListValue {
        let path = reason.hasPrefix("at ") ? step + reason.dropFirst(3) : step + ": " + reason
        return NotAPropertyListValue(reason: "at " + path)
    }
}
