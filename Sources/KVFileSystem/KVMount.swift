import Foundation
import FUSEKit
import KVStore
import KVSyncthing
#if canImport(Glibc)
import Glibc
#endif

/// Mounting and unmounting: what `kvfs mount` and `kvfs unmount` do.
public enum KVMount {
    /// Opens the store, mounts it, and serves until unmounted or sent
    /// SIGTERM, SIGINT or SIGHUP; then commits open files, makes the journal
    /// durable and releases the store. `ready` is called once: with nil when
    /// the mount is visible, or with the reason it could not be made.
    ///
    /// - Returns: the process's exit status.
    public static func run(_ configuration: MountConfiguration, ready: (String?) -> Void) -> Int32 {
        let store: DeviceStore
        do {
            try prepareMountPoint(configuration.mountPoint)
            store = try DeviceStore(syncDirectory: configuration.syncDirectory, stateDirectory: configuration.stateDirectory,
                                    deviceName: configuration.deviceName, owner: "mount \(configuration.mountPoint)")
        } catch {
            ready("cannot mount \(configuration.mountPoint): \(error)")
            return 1
        }
        defer { store.close() }
        let invalidator = Invalidator()
        let fileSystem = KeyFileSystem(store: store, scratchPatterns: configuration.scratchPatterns, invalidator: invalidator)
        let session: FUSESession
        do {
            let options = MountOptions(fsName: "kvfs:" + configuration.syncDirectory.path, subtype: "kvfs", other: configuration.fuseOptions)
            session = try FUSESession(fileSystem: fileSystem, options: options)
            try session.mount(at: configuration.mountPoint)
        } catch {
            ready("cannot mount \(configuration.mountPoint): \(error) (check that it is an empty folder you own, and that /dev/fuse exists)")
            return 1
        }
        invalidator.attach(session)
        let observer = store.addChangeObserver { change in fileSystem.storeChanged(change) }
        let watcher = SyncWatcher(store: store, pollInterval: configuration.pollInterval, polling: configuration.polling)
        let scanner = configuration.syncthing.map { endpoint in
            SyncthingScanner(endpoint: endpoint, syncDirectory: store.syncDirectory, device: store.deviceID.hex) { message in
                FileHandle.standardError.write(Data("kvfs: syncthing: \(message)\n".utf8))
            }
        }
        let commitListener = scanner.map { scanner in store.addCommitListener { scanner.requestScan() } }
        scanner?.requestScan()  // this device's folder may be new, or changed while unmounted
        session.stopOnSignals()
        ready(nil)
        var status: Int32 = 0
        do {
            try session.run()
        } catch {
            FileHandle.standardError.write(Data("kvfs: the FUSE loop failed: \(error)\n".utf8))
            status = 1
        }
        watcher.stop()
        store.removeChangeObserver(observer)
        commitListener.map(store.removeCommitListener)
        scanner?.stop()
        fileSystem.commitAll()
        return status
    }

    /// Unmounts, and waits (up to 10 s) for the daemon to commit and exit.
    public static func unmount(_ mountPoint: String) throws {
        guard isMounted(mountPoint) else { throw MountError("\(mountPoint) is not a kvfs mount") }
        let daemon = daemonProcess(of: mountPoint)
        let status = run("/bin/fusermount3", ["-u", mountPoint])
        guard status == 0 else { throw MountError("cannot unmount \(mountPoint): fusermount3 failed (is a file on it still open?)") }
        guard let daemon else { return }
        for _ in 0..<1000 where kill(daemon, 0) == 0 { usleep(10_000) }
    }

    /// A mount point must be a folder; one left by a killed daemon ("Transport
    /// endpoint is not connected") is detached first.
    static func prepareMountPoint(_ path: String) throws {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOTCONN else { throw MountError("\(path): \(String(cString: strerror(errno)))") }
            FUSESession.detachStaleMount(at: path)
            guard stat(path, &info) == 0 else { throw MountError("\(path) is a stale mount that could not be cleaned up") }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw MountError("\(path) is not a folder") }
        if isMounted(path) { throw MountError("\(path) is already mounted") }
    }

    /// Whether /proc/self/mountinfo lists a kvfs mount at `path`. The table is
    /// decoded leniently: one foreign mount whose name is not UTF-8 must not
    /// hide every kvfs mount.
    static func isMounted(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/self/mountinfo") else { return false }
        let table = String(decoding: data, as: UTF8.self)
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 4 && unescape(fields[4]) == path && line.contains(" - fuse.kvfs ")
        }
    }

    /// The pid of the daemon serving `mountPoint`, as its `.kvfs/status` says.
    private static func daemonProcess(of mountPoint: String) -> pid_t? {
        guard let data = FileManager.default.contents(atPath: mountPoint + "/.kvfs/status"),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return (object["pid"] as? Int).map { pid_t($0) }
    }

    private static func unescape(_ field: Substring) -> String {
        field.replacingOccurrences(of: "\\040", with: " ").replacingOccurrences(of: "\\011", with: "\t")
            .replacingOccurrences(of: "\\012", with: "\n").replacingOccurrences(of: "\\134", with: "\\")
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Why a mount or unmount failed, in one line.
public struct MountError: Error, CustomStringConvertible {
    /// The message.
    public let description: String
    init(_ description: String) { self.description = description }
}

extension KeyFileSystem {
    /// Commits every open buffer: the mount is going away.
    func commitAll() {
        let handles = lock.withLock { Array(files.keys) }
        for handle in handles { try? commit(handle) }
        try? store.flush()
    }
}
