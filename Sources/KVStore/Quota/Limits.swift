/// The store's limits, as NSUbiquitousKeyValueStore sets them.
public enum Limits {
    /// The most keys a store holds.
    public static let maxKeys = 1024
    /// The most bytes all values together may take (a value's size is its file form's length).
    public static let maxTotalBytes = 1_048_576
    /// The most bytes one value may take.
    public static let maxValueBytes = 1_048_576
    /// The longest key, in UTF-16 code units.
    public static let maxKeyUTF16Units = 128
}
