extension DeviceStore {
    /// Sets every key of `values` in one step, as `kvfs import` does.
    ///
    /// Every key, and the quota for all the values together, is checked
    /// before anything is written (keys in byte order: the first refusal is
    /// the one thrown); then the values are journaled as one record (a
    /// batch; one key is a plain put) and merged at once, so no reader (this
    /// device's other processes, other devices, this device after a crash)
    /// ever sees some of them without the others. One refusal writes
    /// nothing: a QuotaViolationChange is logged as for `set`.
    public func setValues(_ values: [StoreKey: PropertyListValue]) throws(KVStoreError) {
        let entries = values.sorted { $0.key < $1.key }
        try write(keys: entries.map(\.key)) { _, _ in
            switch entries.count {
            case 0: []
            case 1: [.put(key: entries[0].key, value: entries[0].value)]
            default: [.batch(puts: entries.map { JournalRecord.Put(key: $0.key, value: $0.value) })]
            }
        }
    }
}
