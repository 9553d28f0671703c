extension Dictionary where Key == StoreKey {
    /// The entries as a Swift `[String: Any]`, each value through `transform`,
    /// for Apple's API (`dictionaryRepresentation`, a dictionary value as
    /// `object(forKey:)` gives it).
    ///
    /// Such a dictionary cannot hold two keys that differ only in their
    /// normalization (`é` as U+00E9, and `e` + U+0301): Swift's `String` is
    /// one key for both. Apple's NSDictionary holds both, and Swift on Apple's
    /// platforms keeps one of them, whichever comes first, when it bridges such
    /// an NSDictionary to `[String: Any]`. Here the one kept is always the
    /// key first in UTF-8 byte order, with its own value and its own spelling;
    /// ``KeyValueStore/values`` and `object(forKey:)` still give each its own.
    func stringKeyed(_ transform: (Value) -> Any) -> [String: Any] {
        var result: [String: Any] = [:]
        result.reserveCapacity(count)
        for (key, value) in self {
            if let kept = result.index(forKey: key.string), StoreKey(result[kept].key) < key { continue }
            // Removed first: an assignment would keep the spelling of the key it replaces.
            result.removeValue(forKey: key.string)
            result[key.string] = transform(value)
        }
        return result
    }
}
