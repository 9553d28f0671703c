import Foundation

/// Stamps from the future (docs/sync.md § Stamps from the future: a remote stamp too far
/// in the future is held back with a warning instead of dragging the clock
/// along). See ``HybridLogicalClock/maximumOffset`` and ``HeldBackRecords``.
extension EngineState {
    /// The records of `batch` that merge now, the clock moved past them.
    ///
    /// All of this device's own records do: its clock must pass them, or its
    /// next write would lose to its earlier ones. Another device's records
    /// stamped past the clock's horizon are held back, with a warning when
    /// that device starts being held back — in this device's own folder too,
    /// where they are records it adopted (``Adoption``).
    mutating func admit(_ batch: DeviceFolderReader.Batch, from device: DeviceID) -> [JournalRecord] {
        let horizon = clock.horizon()
        if device == deviceID {
            let adoptedLater = batch.records.filter { $0.stamp.device != deviceID && $0.stamp.time > horizon }
            _ = heldBack.hold(adoptedLater, of: device, replacing: batch.replacesAll)
            if let latest = batch.latest {  // stamped by this device: a snapshot's end, or a record of a segment
                clock.observeOwn(latest)
                if latest > horizon {
                    warn("this device's own records are stamped up to \(latest), more than \(Self.offsetText) ahead of its clock: it writes after them, and other devices hold its writes back until their clocks come within \(Self.offsetText) of that; check this machine's clock")
                }
            }
            return batch.records.filter { $0.stamp.device == deviceID || $0.stamp.time <= horizon }
        }
        let now = batch.records.filter { $0.stamp.time <= horizon }
        let later = batch.records.filter { $0.stamp.time > horizon }
        if heldBack.hold(later, of: device, replacing: batch.replacesAll), let latest = later.map(\.stamp.time).max() {
            warn("\(sync.folder(of: device).path): records stamped up to \(latest) are more than \(Self.offsetText) ahead of this device's clock; they are held back until it comes within \(Self.offsetText) of them; check the clocks of both machines")
        }
        let within = now.map(\.stamp.time) + [batch.latest].compactMap { $0 }.filter { $0 <= horizon }
        if let latest = within.max() { clock.observe(latest) }
        return now
    }

    /// Merges the held-back records whose time has come; returns the keys
    /// whose value changed.
    mutating func releaseHeldBack() -> Set<StoreKey> {
        guard !heldBack.isEmpty else { return [] }
        var changed: Set<StoreKey> = []
        for (device, released) in heldBack.release(upTo: clock.horizon()) {
            if let latest = released.map(\.stamp.time).max() { clock.observe(latest) }
            let records = released.filter { record in adoptedUpTo[device].map { record.stamp.time > $0 } ?? true }
            changed.formUnion(noteVisibleChanges(merged.apply(records, in: device)))
        }
        return changed
    }

    /// How far this device has read and merged `device`'s records without a
    /// gap: its reader's ``DeviceFolderReader/contiguous``, short of the first
    /// record held back.
    func mergedUpTo(_ device: DeviceID) -> HLCTimestamp? {
        guard let read = readers[device]?.contiguous else { return nil }
        guard let held = heldBack.earliest(of: device) else { return read }
        return min(read, HLCTimestamp(rawValue: held.rawValue - 1))
    }

    private static var offsetText: String { "\(HybridLogicalClock.maximumOffset / 3_600_000) hours" }
}
