extension DeviceStore {
    /// Sets every key of `values` in one step, as `kvfs import` does.
    ///
    /// Every key, and the quota for all the values together, is checked
    /// before anything is written (keys in byte order: the first refusal is
    /// the one thrown); then the values are journaled in one append and merged
    /// at once, so this device never shows some of them without the others,
    /// and other devices read them as one write in the common case. One
    /// refusal writes nothing: a QuotaViolationChange is logged as for `set`.
    public func setValues(_ values: [StoreKey: PropertyListValue]) throws(KVStoreError) {
        let entries = values.sorted { $0.key < $1.key }
        try write(keys: entries.map(\.key)) { _, _ in entries.map { .put(key: $0.key, value: $0.value) } }
    }
}
