import Foundation
import KVStore
import LinuxSystem
import SystemPackage

/// Wakes `kvfs sync` when this machine writes: inotify on its own device
/// folder of each store, so that a write is uploaded at once rather than at
/// the end of a wait that grew while nothing changed.
public final class LocalChanges {
    private let root: SyncRoot
    private let inotify: Inotify
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// Changes in the device folders of this machine in `root` (each store's device is the one in its default
    /// state directory, as ``BucketSync`` takes it).
    public init(root: StoreRoot = .default) throws(BucketError) {
        self.root = SyncRoot(root: root, stateDirectory: { DeviceStore.defaultStateDirectory(for: $0) })
        do { inotify = try Inotify() } catch { throw .local("cannot watch the sync root: \(error)") }
    }

    /// Waits until a file of this machine's device folders changes, or `seconds` have passed; true when one
    /// changed. Folders that appeared since the last wait (a new store) are watched from now on.
    public func wait(seconds: TimeInterval) -> Bool {
        for (store, device) in root.ownDevices() {
            let folder = root.url("\(store)/devices/\(device.hex)").path
            _ = try? inotify.watch(folder, for: [.modify, .closeWrite, .movedTo, .create, .delete, .onlyDirectory, .dontFollow])
        }
        let ready = (try? Poll.wait(for: [(inotify.descriptor, .readable)], timeout: .milliseconds(Int(seconds * 1000)))) ?? []
        guard ready.first?.contains(.readable) == true else { return false }
        while let events = try? inotify.read(into: &buffer), !events.isEmpty {}
        return true
    }
}
