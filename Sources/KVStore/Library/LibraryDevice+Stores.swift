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
    /// root, opened if none is. It is the machine's device of that store:
    /// the state directory a mount of it uses (`$XDG_STATE_HOME/kvfs/default`
    /// for the store `default`, `$XDG_STATE_HOME/kvfs/ID-<hash>` for another),
    /// shared with the mount and every other program of the store on this
    /// machine (``StateDirectory``). The state directories earlier versions
    /// gave each program (`swift-PROGRAM`, `swift-PROGRAM-2@ID`…) are left
    /// alone: their devices' values stay in the store, and `kvfs retire`
    /// removes their folders.
    static func shared(for identifier: StoreIdentifier) throws(KVStoreError) -> LibraryDevice {
        try open.withLock { (devices: inout [StoreIdentifier: WeakDevice]) throws(KVStoreError) -> LibraryDevice in
            if let device = devices[identifier]?.device { return device }
            let device = try LibraryDevice(syncDirectory: StoreRoot.default.folder(of: identifier), stateDirectory: nil, deviceName: nil)
            devices[identifier] = WeakDevice(device: device)
            return device
        }
    }
}
