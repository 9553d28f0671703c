/// What every owner of a store's state knows of the store and never
/// changes: which device this is, the sync directory, the clock that stamps
/// its writes, where its warnings go, and whether it was opened only to be read.
struct StoreContext: Sendable {
    /// This device's id.
    let deviceID: DeviceID
    /// This device's name, as other devices show it.
    let deviceName: String
    /// The shared folder.
    let sync: SyncDirectory
    /// Stamps this device's writes.
    let clock: HybridLogicalClock
    /// Where warnings go (the log).
    let warn: @Sendable (String) -> Void
    /// Whether nothing in the sync directory or the state directory may be created or written.
    let isReadOnly: Bool
}
