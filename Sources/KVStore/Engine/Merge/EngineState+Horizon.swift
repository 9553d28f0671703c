import Foundation

/// Stamps from the future (docs/sync.md § Stamps from the future: a remote stamp too far
/// in the future is held back with a warning instead of dragging the clock
/// along). See ``HybridLogicalClock/maximumOffset`` and ``HeldBackRecords``.
extension EngineState {
    /// The records of `batch` that merge now, the clock moved past them:
    /// those stamped up to the clock's horizon.
    ///
    /// Another device's records stamped past it are held back, with a
    /// warning when that device starts being held back — in this device's own
    /// folder too, where they are records it adopted (``Adoption``). This
    /// device's own records stamped past it wait to be rewritten
    /// (``OwnRecordsAhead``): followed, they would carry its every later
    /// write out of the other devices' reach.
    mutating func admit(_ batch: DeviceFolderReader.Batch, from device: DeviceID) -> [JournalRecord] {
        let horizon = clock.horizon()
        let later = batch.records.filter { $0.stamp.time > horizon }
        if device == deviceID {
            _ = folders.heldBack.hold(later.filter { $0.stamp.device != deviceID }, of: device, replacing: batch.replacesAll)
            let ahead = later.filter { $0.stamp.device == deviceID }, latest = batch.latest.flatMap { $0 > horizon ? $0 : nil }
            own.withLock { $0.ahead.note(ahead, latest: latest, replacing: batch.replacesAll) }
        } else if folders.heldBack.hold(later, of: device, replacing: batch.replacesAll), let latest = later.map(\.stamp.time).max() {
            warn("\(sync.folder(of: device).path): records stamped up to \(latest) are more than \(Self.offsetText) ahead of this device's clock; they are held back until it comes within \(Self.offsetText) of them; check the clocks of both machines")
        }
        let now = batch.records.filter { $0.stamp.time <= horizon }
        let within = now.map(\.stamp.time) + [batch.latest].compactMap { $0 }.filter { $0 <= horizon }
        if let latest = within.max() { clock.observe(latest) }
        return now
    }

    /// Appends again, stamped now and in their order, this device's own
    /// records that were stamped past the horizon (``OwnRecordsAhead``), and
    /// merges them; returns the records appended. The compaction the store
    /// runs next (``DeviceStore``) leaves the old stamps out of the folder.
    /// They are appended as they were, without a quota check: they are
    /// writes acknowledged before, as another device's records are merged.
    mutating func rewriteOwnRecordsAhead() throws(KVStoreError) -> [JournalRecord] {
        let waiting = own.withLock { $0.ahead.waiting }
        let records = waiting.isEmpty ? [] : try append(waiting.map(\.operation))
        _ = noteVisibleChanges(merged.apply(records, in: deviceID))
        own.withLock { $0.ahead.rewritten(records) }
        return records
    }

    /// The latest stamp of `device`'s in `batch` (its snapshot's closing one
    /// included) that is not past the clock's horizon.
    func latestAdmitted(_ batch: DeviceFolderReader.Batch, of device: DeviceID) -> HLCTimestamp? {
        let horizon = clock.horizon()
        let stamps = batch.records.filter { $0.stamp.device == device }.map(\.stamp.time) + [batch.latest].compactMap { $0 }
        return stamps.filter { $0 <= horizon }.max()
    }

    /// Merges the held-back records whose time has come; returns the keys
    /// whose value changed.
    mutating func releaseHeldBack() -> Set<StoreKey> {
        guard !folders.heldBack.isEmpty else { return [] }
        var changed: Set<StoreKey> = []
        for (device, released) in folders.heldBack.release(upTo: clock.horizon()) {
            if let latest = released.map(\.stamp.time).max() { clock.observe(latest) }
            let records = released.filter { record in folders.adoptedUpTo[device].map { record.stamp.time > $0 } ?? true }
            changed.formUnion(noteVisibleChanges(merged.apply(records, in: device)))
        }
        return changed
    }

    private static var offsetText: String { "\(HybridLogicalClock.maximumOffset / 3_600_000) hours" }
}
