import Foundation
import FUSEKit
import KVStore
import KVSyncthing
import LinuxSystem
import Logging
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Mounting and unmounting: what `kvfs mount` and `kvfs unmount` do.
public enum KVMount {
    private static let logger = Logger(label: "kvfs.daemon")

    /// Opens the store, mounts it, and serves until unmounted or sent
    /// SIGTERM, SIGINT or SIGHUP; then commits open files, makes the journal
    /// durable and releases the store. `ready` is called once: with nil when
    /// the mount is visible, or with the reason it could not be made.
    /// `service` starts what the daemon serves beside the filesystem (the
    /// command line's control socket); it is stopped before the store closes.
    ///
    /// - Returns: the process's exit status.
    public static func run(_ configuration: MountConfiguration,
                           service: (MountedStore) -> (any MountService)? = { _ in nil },
                           ready: (MountError?) -> Void) -> Int32 {
        let mountPoint = configuration.mountPoint
        let store: DeviceStore
        do {
            try prepareMountPoint(mountPoint, allowingFiles: configuration.mountOverFiles)
            try checkFUSEDevice()
            store = try DeviceStore(syncDirectory: configuration.syncDirectory, stateDirectory: configuration.stateDirectory,
                                    deviceName: configuration.deviceName, owner: "mount \(mountPoint)")
        } catch let error as KVStoreError {
            ready(MountError("cannot mount \(mountPoint): \(error)", cause: error))
            return 1
        } catch {
            ready(MountError("cannot mount \(mountPoint): \(error)"))
            return 1
        }
        defer { store.close() }
        let invalidator = Invalidator()
        let fileSystem = KeyFileSystem(store: store, scratchPatterns: configuration.scratchPatterns, invalidator: invalidator)
        let session: FUSESession
        // libfuse says what it refused (an unknown option, say) in a message of its own, not in the errno.
        let libfuseSaid = Mutex<String?>(nil)
        LibfuseLog.setHandler { message in libfuseSaid.withLock { $0 = message } }
        var sessionCreated = false
        let resolvedMountPoint = resolved(mountPoint)
        do {
            let options = MountOptions(fsName: "kvfs:" + configuration.syncDirectory.path, subtype: "kvfs",
                                       debug: configuration.debug, other: configuration.mountOptions)
            session = try FUSESession(fileSystem: fileSystem, options: options)
            sessionCreated = true
            try session.mount(at: mountPoint)
        } catch {
            let reason = libfuseSaid.withLock { $0 }.map(libfuseReason) ?? String(describing: error)
            // FUSESession's init fails only for options libfuse does not know.
            ready(MountError("cannot mount \(mountPoint): \(reason)", isUsageError: !sessionCreated))
            return 1
        }
        let fuseLogger = Logger(label: "kvfs.fuse")
        LibfuseLog.setHandler { message in fuseLogger.debug("\(message)") }
        invalidator.attach(session)
        fileSystem.mounted(at: resolvedMountPoint)
        let observer = store.addVisibilityObserver { keys in fileSystem.keysChanged(keys) }
        let watcher = SyncWatcher(store: store, pollInterval: configuration.pollInterval, polling: configuration.polling)
        let syncthingLogger = Logger(label: "kvfs.syncthing")
        let scanner = configuration.syncthing.map { endpoint in
            SyncthingScanner(endpoint: endpoint, syncDirectory: store.syncDirectory, device: store.deviceID.hex) { message in
                syncthingLogger.warning("\(message)")
            }
        }
        let commitListener = scanner.map { scanner in store.addCommitListener { scanner.requestScan() } }
        scanner?.requestScan()  // this device's folder may be new, or changed while unmounted
        session.stopOnSignals()
        let companion = service(MountedStore(store: store, fileSystem: fileSystem))
        logger.info("kvfs \(KVFSVersion.description) mounted store \(store.storeID.isEmpty ? "(id not yet known)" : store.storeID) of \(store.syncDirectory.path) at \(mountPoint) as device \(store.deviceName) (\(store.deviceID)), state in \(store.stateDirectory.path), options: \(configuration.optionsDescription)")
        ready(nil)
        var status: Int32 = 0
        do {
            try session.run()
        } catch {
            logger.error("the FUSE loop failed: \(error)")
            status = 1
        }
        // Unmounted: a stopping signal now (kvfs unmount sends SIGTERM after
        // fusermount3, in case a copy of the mount kept the connection) must
        // not cut the last commits short.
        for stopping in [SIGTERM, SIGINT, SIGHUP] { _ = Glibc.signal(stopping, SIG_IGN) }
        store.announceClosing()
        companion?.stop()
        watcher.stop()
        store.removeChangeObserver(observer)
        commitListener.map(store.removeCommitListener)
        fileSystem.commitAll()
        store.close()
        scanner?.finish(timeout: 2)  // the closed store's last progress tells the other machines this one stopped
        logger.info("unmounted \(mountPoint): every write committed; exiting")
        return status
    }

    /// Unmounts, and waits (up to 11 s) for the daemon to commit and exit:
    /// every thread of it ended, so its state directory is free.
    ///
    /// The daemon is the process `daemon` finds for what the mount's
    /// `.kvfs/status` says of it, held by a pidfd: never a pid read from the
    /// file, which numbers the daemon in its own pid namespace, where another
    /// process (another store's daemon) may have that number here. When
    /// `daemon` finds none, this returns once `fusermount3` has.
    ///
    /// A daemon still running after a second is sent SIGTERM: a copy of the
    /// mount in another mount namespace keeps the connection alive after
    /// `fusermount3 -u`, and only the daemon can end it
    /// (``FUSESession/stop()`` aborts it through the fusectl filesystem; a
    /// user for whom fusectl is not mounted cannot, and then this throws
    /// after 10 s, while the daemon serves the copy until it goes).
    public static func unmount(_ path: String, daemon find: (DaemonIdentity) -> ProcessHandle?) throws {
        let mountPoint = mountTablePath(path)
        guard isMounted(mountPoint) else { throw MountError("\(path) is not a kvfs mount") }
        let daemon = daemonIdentity(of: mountPoint).flatMap(find)
        let status = try? Spawn("/bin/fusermount3", ["-u", mountPoint]).run()
        guard status?.succeeded == true else {
            throw MountError("cannot unmount \(mountPoint): fusermount3 failed (is a file on it still open?)")
        }
        guard let daemon, !daemon.waitForExit(timeout: .seconds(1)) else { return }
        try? daemon.send(SIGTERM)
        guard daemon.waitForExit(timeout: .seconds(10)) else {
            throw MountError("unmounted \(mountPoint), but its daemon (pid \(daemon.pid)) has not exited after 10 s; see daemon.log in its state directory")
        }
    }

    /// A mount point must be an empty folder, unless `allowingFiles` (`-o
    /// nonempty`): a mount hides what the folder holds. One left by a killed
    /// daemon ("Transport endpoint is not connected", or "Software caused
    /// connection abort" for a look it never answered) is detached first.
    static func prepareMountPoint(_ path: String, allowingFiles: Bool) throws {
        // statvfs first: with default_permissions (which -o allow_other turns on) the kernel
        // answers stat of a dead daemon's mount point from cached attributes; STATFS it never caches.
        var usage = statvfs()
        if statvfs(path, &usage) != 0 && errno == ENOTCONN { FUSESession.detachStaleMount(at: path) }
        var info = stat()
        if stat(path, &info) != 0 {
            // ECONNABORTED: the look was in flight when the daemon died (the kernel ends such requests so).
            guard errno == ENOTCONN || errno == ECONNABORTED else { throw MountError("\(path): \(String(cString: strerror(errno)))") }
            FUSESession.detachStaleMount(at: path)
            guard stat(path, &info) == 0 else { throw MountError("\(path) is a stale mount that could not be cleaned up") }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw MountError("\(path) is not a folder") }
        if isMounted(path) { throw MountError("\(path) is already mounted") }
        if !allowingFiles, let names = try? FileManager.default.contentsOfDirectory(atPath: path), !names.isEmpty {
            throw MountError("\(path) is not empty, and the mount would hide its files; use an empty folder, or -o nonempty to mount over them")
        }
    }

    /// Says in one line why `/dev/fuse` cannot be opened, before libfuse
    /// tries (it prints a message of its own and a guess about the cause).
    static func checkFUSEDevice() throws {
        do {
            let device = try SystemCallError.naming("open", "/dev/fuse") {
                try FileDescriptor.open("/dev/fuse", .readWrite, options: .closeOnExec)
            }
            try? device.close()
        } catch {
            switch error.errno {
            case .noSuchFileOrDirectory, .operationNotSupportedByDevice, .noSuchAddressOrDevice:
                throw MountError("/dev/fuse does not exist: load the fuse kernel module (modprobe fuse), or give the container the device")
            case .permissionDenied, .notPermitted:
                throw MountError("no permission to open /dev/fuse (\(error.errno)): it must be readable and writable for you, as its usual mode 0666 makes it")
            default:
                throw MountError("cannot open /dev/fuse: \(error.errno)")
            }
        }
    }

    /// `path` with its symbolic links resolved, as mountinfo names a mount
    /// point (`path` itself when it cannot be resolved). Only for a path not
    /// yet mounted: resolving a FUSE mount point asks its filesystem.
    private static func resolved(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` as the mount table names a mount there: symbolic links in the
    /// folders above it and at its end (`kvfs mount lnk` mounts at lnk's
    /// target) resolved, with no look at the mount itself, which would ask
    /// its filesystem (a hung daemon's would hang `kvfs unmount`).
    static func mountTablePath(_ path: String) -> String {
        var candidate = path
        var links = 0
        while !isMounted(candidate) && links < 40 {  // 40: the kernel's limit on links in one path
            let name = (candidate as NSString).lastPathComponent
            let folder = resolved((candidate as NSString).deletingLastPathComponent)
            candidate = (folder as NSString).appendingPathComponent(name)
            guard !isMounted(candidate), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: candidate) else { break }
            candidate = target.hasPrefix("/") ? target : (folder as NSString).appendingPathComponent(target)
            links += 1
        }
        return candidate
    }

    /// libfuse's message without its "fuse: " prefix.
    private static func libfuseReason(_ message: String) -> String {
        message.hasPrefix("fuse: ") ? String(message.dropFirst(6)) : message
    }

    /// Whether /proc/self/mountinfo lists a kvfs mount at `path`.
    static func isMounted(_ path: String) -> Bool {
        let table = (try? ProcessFolder.current.mounts()) ?? []
        return table.contains { $0.mountPoint == path && $0.type == "fuse.kvfs" }
    }

    /// What the daemon serving `mountPoint` says of itself in its `.kvfs/status`.
    ///
    /// Read to its end, not to the size an earlier `stat` gave: the document
    /// is made anew at each open and its times change its length, so a reader
    /// that trusts the size (Foundation's `contents(atPath:)`) can cut it
    /// short, and unmount then returned without waiting for the daemon.
    private static func daemonIdentity(of mountPoint: String) -> DaemonIdentity? {
        guard let bytes = try? FileDescriptor.contents(of: mountPoint + "/.kvfs/status") else { return nil }
        return try? JSONDecoder().decode(DaemonIdentity.self, from: Data(bytes))
    }
}

/// Who a mount's daemon says it is, in its status (`.kvfs/status`, or
/// `kvfs status` through its control socket). While it runs, no other
/// process says the same: it alone holds its state directory.
public struct DaemonIdentity: Decodable, Equatable, Sendable {
    /// Its pid, as its own pid namespace numbers it (which may not be this one).
    public var pid: Int
    /// Its state directory, where its control socket is.
    public var stateDirectory: String
    /// Where it mounted the store.
    public var mountPoint: String?

    /// What `status` says.
    public init(_ status: StoreStatus) {
        pid = status.pid
        stateDirectory = status.stateDirectory
        mountPoint = status.mountPoint
    }
}

/// The mounted store, for what the daemon serves beside the filesystem.
public struct MountedStore: Sendable {
    /// The store the mount shows.
    public let store: DeviceStore
    let fileSystem: KeyFileSystem

    /// Makes changes made to ``store`` directly, not through the mount, show
    /// at once: the kernel drops what it cached of these keys.
    public func keysChanged(_ keys: [StoreKey]) {
        fileSystem.keysChanged(keys)
    }
}

/// Something the daemon runs beside the filesystem while mounted.
public protocol MountService: AnyObject {
    /// Stops it; called once the filesystem is unmounted, before the store closes.
    func stop()
}

/// Why a mount or unmount failed, in one line.
public struct MountError: Error, CustomStringConvertible {
    /// The message.
    public let description: String
    /// The store's error behind it, if any (a busy state directory, an I/O error).
    public let cause: KVStoreError?
    /// Whether the options were wrong (one that FUSE does not know).
    public let isUsageError: Bool
    init(_ description: String, cause: KVStoreError? = nil, isUsageError: Bool = false) {
        self.description = description
        self.cause = cause
        self.isUsageError = isUsageError
    }
}

extension KeyFileSystem {
    /// Commits every open buffer: the mount is going away.
    func commitAll() {
        let handles = tables.withLock { Array($0.files.keys) }
        for handle in handles { try? commit(handle) }
        try? store.flush()
    }
}
