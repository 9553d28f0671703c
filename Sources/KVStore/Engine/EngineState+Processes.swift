/// The device's other processes: a device is a machine, and every process
/// that opens the store with its state directory (a mount, Swift programs,
/// `kvfs set`) appends to its one journal (``StateDirectory``).
///
/// Why appends take a lock in the state directory, each process reading
/// what the others appended, rather than every process sending its writes
/// to a daemon through its control socket: the lock works with no daemon at
/// all (two programs and no mount is the common case for apps), where the
/// socket needs a mount and, when none runs, the lock besides; and a write
/// under the lock costs less than one round trip through the socket.
/// Measured with `kvfs-bench appends --writes 3000` (a debug build, 2 shared
/// cores, load 9), the median of one `set`: 0.05 ms under the lock with no
/// other process writing (two `fstatat`s find nothing new), 0.22 ms when two
/// processes take turns (each write first reads the other's), 0.32 ms as a
/// request to a mount's daemon through its control socket; p99 about 4 ms in all three.
extension EngineState {
    /// Reads what the device's other processes wrote to its folder since
    /// this one last looked (their appends, their compactions), and merges
    /// it as it would another device's records, its clock moving past them.
    /// Returns the keys whose visible entry changed.
    mutating func readOwnFolder() -> Set<StoreKey> {
        let batch = own.withLock { $0.reader.readNew() }
        let changed = merge(batch, from: deviceID)
        // As at open: a record stamped past the clock's horizon is not this device's latest (``OwnRecordsAhead``).
        let latest = latestAdmitted(batch, of: deviceID)
        own.withLock { $0.noteRead(latest) }
        return changed
    }

    /// Readies this process, in its turn at the journal (``OwnJournal``), to
    /// append or to start a compaction: reads what the device's other
    /// processes appended (so that the quota is checked against every write
    /// of the device, and the clock stamps the next write after all of
    /// them), and moves the writer to where they left the journal (their new
    /// segment, after their last whole record).
    mutating func followOtherProcesses() throws(KVStoreError) {
        guard !context.isReadOnly else { return }
        readOtherProcessesWrites()
        try own.withLock { folder throws(KVStoreError) in try folder.followOtherProcesses() }
    }

    /// Reads what the device's other processes wrote, unless nothing is new
    /// (``JournalWriter/holdsNothingNew(past:)``), keeping it for the store
    /// to report (``OwnFolder/State/takeOtherProcessesWrites()``).
    mutating func readOtherProcessesWrites() {
        guard !own.withLock({ $0.holdsNothingNew }) else { return }
        let setAsideBefore = merged.setAside
        let changed = readOwnFolder()
        let setAside = merged.setAside.subtracting(setAsideBefore)
        own.withLock { folder in
            folder.fromOtherProcesses.changed.formUnion(changed)
            folder.fromOtherProcesses.setAside.formUnion(setAside)
        }
    }
}
