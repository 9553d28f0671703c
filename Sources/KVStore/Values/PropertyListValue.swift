import Foundation

/// A value the store can hold: one of the eight property-list types.
///
/// Arrays and dictionaries nest. This is the store's own currency; the
/// library converts it to and from Foundation objects (`Any`) at its edge.
public enum PropertyListValue: Sendable, Hashable {
    /// A Unicode string.
    case string(String)
    /// A signed 64-bit integer.
    case integer(Int64)
    /// A double-precision floating-point number.
    case real(Double)
    /// A Boolean.
    case bool(Bool)
    /// A point in time.
    case date(Date)
    /// Raw bytes.
    case data(Data)
    /// An ordered list of values.
    case array([PropertyListValue])
    /// A map from strings to values.
    case dictionary([StoreKey: PropertyListValue])

    /// The value's type, as `user.kvfs.type` names it.
    public var type: PropertyListType {
        switch self {
        case .string: .string
        case .integer: .integer
        case .real: .real
        case .bool: .bool
        case .date: .date
        case .data: .data
        case .array: .array
        case .dictionary: .dictionary
        }
    }
}

/// The eight property-list types, named as `getfattr -n user.kvfs.type` prints them.
public enum PropertyListType: String, Sendable, CaseIterable, Hashable {
    /// See ``PropertyListValue/string(_:)``.
    case string
    /// See ``PropertyListValue/integer(_:)``.
    case integer
    /// See ``PropertyListValue/real(_:)``.
    case real
    /// See ``PropertyListValue/bool(_:)``.
    case bool
    /// See ``PropertyListValue/date(_:)``.
    case date
    /// See ``PropertyListValue/data(_:)``.
    case data
    /// See ``PropertyListValue/array(_:)``.
    case array
    /// See ``PropertyListValue/dictionary(_:)``.
    case dictionary
}
