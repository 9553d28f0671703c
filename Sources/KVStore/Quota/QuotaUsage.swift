/// What a store uses against its limits, and the one place writes are checked against them.
public struct QuotaUsage: Sendable, Equatable {
    /// Number of keys.
    public var keys: Int
    /// Sum of the values' sizes, in bytes.
    public var bytes: Int

    /// An empty store's usage.
    public init(keys: Int = 0, bytes: Int = 0) {
        self.keys = keys
        self.bytes = bytes
    }

    /// Checks a key's name against the length limit.
    public static func checkKey(_ key: StoreKey) throws(KVStoreError) {
        if key.string.isEmpty { throw .emptyKey }
        let units = key.string.utf16.count
        if units > Limits.maxKeyUTF16Units { throw .keyTooLong(key: key, utf16Units: units) }
    }

    /// Checks that replacing `key`'s value (of `oldSize` bytes, or none) by one of
    /// `newSize` bytes keeps the store within its limits.
    public func checkWrite(key: StoreKey, oldSize: Int?, newSize: Int) throws(KVStoreError) {
        if newSize > Limits.maxValueBytes { throw .valueTooLarge(key: key, bytes: newSize) }
        if oldSize == nil && keys >= Limits.maxKeys { throw .tooManyKeys(key: key) }
        let total = bytes - (oldSize ?? 0) + newSize
        if total > Limits.maxTotalBytes { throw .storeFull(key: key, over: total - Limits.maxTotalBytes) }
    }

    /// Whether the usage is within every limit.
    public var isWithinLimits: Bool { keys <= Limits.maxKeys && bytes <= Limits.maxTotalBytes }
}
