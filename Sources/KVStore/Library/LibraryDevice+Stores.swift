import Foundation
import Synchronization

extension LibraryDevice {
    /// The devices this process has open, by store: every object over one
    /// store is one device, as ``UbiquitousKeyValueStore/init()`` shares
    /// ``UbiquitousKeyValueStore/default``'s. Weak: a device closes when its
    /// last object goes, and is opened again by the next.
    private static let open = Mutex<[StoreIdentifier: WeakDevice]>([:])

    private struct WeakDevice {
        weak var device: LibraryDevice?
    }

    /// The device of this process over the store `identifier` of the sync
    /// root, opened if none is: with the state directory
    /// `$XDG_STATE_HOME/kvfs/swift-PROGRAM@ID` (`swift-PROGRAM` for the
    /// store `default`, as before stores had names), or `swift-PROGRAM-N@ID`
    /// for the Nth instance of the program running at once (up to 8).
    static func shared(for identifier: StoreIdentifier) throws(KVStoreError) -> LibraryDevice {
        try open.withLock { (devices: inout [StoreIdentifier: WeakDevice]) throws(KVStoreError) -> LibraryDevice in
            if let device = devices[identifier]?.device { return device }
            let device = try opening(identifier)
            devices[identifier] = WeakDevice(device: device)
            return device
        }
    }

    private static func opening(_ identifier: StoreIdentifier) throws(KVStoreError) -> LibraryDevice {
        let program = ProcessInfo.processInfo.processName
        let syncDirectory = StoreRoot.default.folder(of: identifier)
        let stateFolder = DeviceStore.defaultStateDirectory(for: DeviceStore.defaultSyncDirectory).deletingLastPathComponent()
        var failure = KVStoreError.io(path: stateFolder.path, reason: "no state directory was free")
        for instance in 1...8 {
            let name = instance == 1 ? "swift-\(program)" : "swift-\(program)-\(instance)"
            let state = identifier == .default ? name : name + "@" + identifier.rawValue
            do throws(KVStoreError) {
                return try LibraryDevice(syncDirectory: syncDirectory, stateDirectory: stateFolder.appendingPathComponent(state),
                                         deviceName: String("\(ProcessInfo.processInfo.hostName) (\(name))".prefix(DeviceName.maximumLength)))
            } catch {
                failure = error
                guard case .stateDirectoryBusy = error else { break }
            }
        }
        throw failure
    }
}
