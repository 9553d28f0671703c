extension JournalWriter {
    /// Seals the plain records of this device's own `folder` (sealed by the
    /// store's keys) by a compaction: every record its plain files hold (its
    /// snapshot's, and its segments' after it) goes, as it is, into a sealed
    /// snapshot, and the plain files go (docs/sealed.md § Converting a store).
    /// Nothing is dropped: retention and tombstone collection are for the
    /// store's next compactions to apply, sealed. Returns how many records were sealed.
    ///
    /// Run as the store opens, under the journal's lock, when the store is
    /// sealed, this device is a member that has not written its folder sealed
    /// yet (`StateDirectory.sealedStoreID`), and its folder still starts with a
    /// plain record: the device that sealed the store (`kvfs seal`), one that
    /// was interrupted doing so, and a device that wrote plain records and then
    /// joined. Never after: plain records found then are a writer's without
    /// keys, and the folder's reader refuses them. The writer that compacts is this one's for the moment: the store
    /// then reads its folder, sealed, as at any open.
    static func sealPlainRecords(of folder: DeviceFolder, device: DeviceID, claim: WriterClaim, files: any JournalFileOpener,
                                 clock: HybridLogicalClock, warn: @escaping @Sendable (String) -> Void) throws(KVStoreError) -> Int {
        let plain = DeviceFolderReader(device: device, folder: folder.unsealed, ownFolder: true, warn: warn)
        let read = plain.readNew()
        let records = read.records.filter { !$0.closesSegment }
        // Its chain is the plain reader's (none): the plain segment's close mark is written plain, and goes with it.
        let writer = try JournalWriter(folder: folder, recoveredBy: plain, claim: claim, files: files)
        if let latest = read.latest { clock.observe(latest) }
        let stamp = Stamp(time: try clock.now(), device: device)
        _ = try writer.beginCompaction(records, stamp: stamp).finish()
        return records.count
    }
}
