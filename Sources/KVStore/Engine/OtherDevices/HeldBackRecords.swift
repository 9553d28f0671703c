/// Other devices' records stamped past this device's clock horizon
/// (``HybridLogicalClock/horizon()``), waiting until the wall clock comes
/// within ``HybridLogicalClock/maximumOffset`` of them.
///
/// Holding a record back is reading it later: the store is the merge of the
/// records read, and merging is order-independent (``MergedState``), so once
/// every device's wall clock has passed a record's stamp less the maximum
/// offset, every device has merged it and all show the same store. Until
/// then a device that holds a record back shows what it would have shown
/// before the record arrived, and does not claim to have read it
/// (``DeviceStore`` publishes its reading progress short of it, so no
/// tombstone collection counts on it).
struct HeldBackRecords {
    private var records: [DeviceID: [JournalRecord]] = [:]

    /// Whether nothing is held back.
    var isEmpty: Bool { records.isEmpty }

    /// Holds `later` back for `device`, after what it holds already, or
    /// instead of it when the records came with a snapshot that replaces all
    /// the device's records. Returns whether the device had nothing held before.
    mutating func hold(_ later: [JournalRecord], of device: DeviceID, replacing: Bool) -> Bool {
        let before = records[device] ?? []
        let kept = (replacing ? [] : before) + later
        records[device] = kept.isEmpty ? nil : kept
        return before.isEmpty && !kept.isEmpty
    }

    /// Takes out the records stamped up to `horizon`, per device.
    mutating func release(upTo horizon: HLCTimestamp) -> [DeviceID: [JournalRecord]] {
        var released: [DeviceID: [JournalRecord]] = [:]
        for (device, held) in records {
            let due = held.filter { $0.stamp.time <= horizon }
            guard !due.isEmpty else { continue }
            released[device] = due
            let rest = held.filter { $0.stamp.time > horizon }
            records[device] = rest.isEmpty ? nil : rest
        }
        return released
    }

    /// What is held back for `device`.
    func records(of device: DeviceID) -> [JournalRecord] { records[device] ?? [] }

    /// Drops what is held for a device whose folder went away.
    mutating func forget(_ device: DeviceID) { records[device] = nil }

    /// The earliest stamp held back for `device`, if any.
    func earliest(of device: DeviceID) -> HLCTimestamp? { records[device]?.map(\.stamp.time).min() }

    /// How many records are held back for `device`.
    func count(of device: DeviceID) -> Int { records[device]?.count ?? 0 }
}
