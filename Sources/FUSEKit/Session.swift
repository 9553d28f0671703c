import CFUSE
import Glibc
import LinuxSystem

/// Options of a mount, passed to libfuse as `-o` options.
///
/// Unknown options make ``FUSESession/init(fileSystem:options:)`` fail with
/// `EINVAL` (libfuse prints which one to standard error).
public struct MountOptions: Hashable, Sendable {
    /// `fsname=`: the "device" column of `/proc/mounts` and `df`.
    public var fsName: String?
    /// `subtype=`: shown as `fuse.SUBTYPE` in `/proc/mounts` (e.g. `kvfs`).
    public var subtype: String?
    /// `allow_other`: let users other than the mounting one in (needs root,
    /// or `user_allow_other` in `/etc/fuse.conf`).
    public var allowOther: Bool
    /// `default_permissions`: the kernel checks permissions against the file
    /// modes itself (and never sends `access`).
    public var defaultPermissions: Bool
    /// `auto_unmount`: `fusermount3` unmounts if this process dies.
    public var autoUnmount: Bool
    /// `-d`: libfuse prints every request and reply to standard error.
    public var debug: Bool
    /// Any further `-o` options, one per element, e.g. `"max_read=131072"`.
    public var other: [String]

    /// Creates mount options; the defaults are libfuse's.
    public init(fsName: String? = nil, subtype: String? = nil, allowOther: Bool = false,
                defaultPermissions: Bool = false, autoUnmount: Bool = false, debug: Bool = false,
                other: [String] = []) {
        self.fsName = fsName
        self.subtype = subtype
        self.allowOther = allowOther
        self.defaultPermissions = defaultPermissions
        self.autoUnmount = autoUnmount
        self.debug = debug
        self.other = other
    }

    /// The command line libfuse parses: a program name, then `-d` and `-o` as set.
    public var arguments: [String] {
        // fuse_opt splits option groups at commas; a backslash escapes one.
        func escaped(_ value: String) -> String {
            var result = ""
            for character in value {
                if character == "\\" || character == "," { result.append("\\") }
                result.append(character)
            }
            return result
        }
        var options: [String] = []
        if let fsName { options.append("fsname=" + escaped(fsName)) }
        if let subtype { options.append("subtype=" + escaped(subtype)) }
        if allowOther { options.append("allow_other") }
        if defaultPermissions { options.append("default_permissions") }
        if autoUnmount { options.append("auto_unmount") }
        options += other
        var arguments = ["fusekit"]
        if debug { arguments.append("-d") }
        if !options.isEmpty { arguments += ["-o", options.joined(separator: ",")] }
        return arguments
    }
}

/// How ``FUSESession/run(_:)`` serves requests.
public struct LoopConfiguration: Hashable, Sendable {
    /// One thread (the caller's) answers every request in turn
    /// (`fuse_session_loop`); the filesystem is never called concurrently.
    /// Faster when the client and the daemon share one CPU.
    public var singleThreaded: Bool
    /// Most threads answering requests at once (`fuse_loop_cfg_set_max_threads`).
    public var maxThreads: Int
    /// Most idle threads kept; `nil` keeps libfuse's default (never shrink).
    public var maxIdleThreads: Int?
    /// Give each thread its own `/dev/fuse` descriptor (`clone_fd`).
    public var cloneFD: Bool

    /// The multi-threaded loop (`fuse_session_loop_mt`); libfuse's default is 10 threads.
    public static func multiThreaded(maxThreads: Int = 10, maxIdleThreads: Int? = nil, cloneFD: Bool = false) -> LoopConfiguration {
        LoopConfiguration(singleThreaded: false, maxThreads: maxThreads, maxIdleThreads: maxIdleThreads, cloneFD: cloneFD)
    }

    /// The single-threaded loop (`fuse_session_loop`).
    public static let singleThreaded = LoopConfiguration(singleThreaded: true, maxThreads: 1, maxIdleThreads: nil, cloneFD: false)
}

/// A FUSE session: one filesystem, mounted at one path, served by libfuse's
/// low-level loop.
///
/// ```swift
/// let session = try FUSESession(fileSystem: fs, options: MountOptions(fsName: "kvfs", subtype: "kvfs"))
/// try session.mount(at: "/mnt/kv")
/// session.stopOnSignals()            // or call session.stop() from anywhere
/// try session.run()                  // blocks; returns once stopped and unmounted
/// try fs.commit()                    // the filesystem's own shutdown work
/// ```
///
/// Daemonizing is the caller's business (FUSEKit never calls `fuse_daemonize`).
/// All methods may be called from any thread.
public final class FUSESession: @unchecked Sendable {
    // @unchecked: `session` is a pointer libfuse's calls take from any thread;
    // it and `operations` are set once in init and freed in deinit, when no
    // other thread can hold a reference. The rest is in `lifecycle`.

    /// Where the session stands, behind its lock.
    private struct Lifecycle: Sendable {
        enum State { case created, mounted, running, finished }
        var state = State.created
        var mountPath: String?
        /// This connection's folder in fusectl (`/sys/fs/fuse/connections/N`,
        /// N the mount's device number from mountinfo), found after mounting.
        var connection: FuseControl.Connection?
        /// The mount point with links resolved, as mountinfo names it.
        var canonicalMountPath: String?
        var stopRequested = false

        var isConnected: Bool { state == .mounted || state == .running }
    }

    /// libfuse's session (`struct fuse_session *`).
    private let session: OpaquePointer
    /// The filesystem, kept alive for the session's userdata pointer.
    private let operations: OperationsBox
    private let lifecycle = ReadWriteLocked(Lifecycle())

    /// Creates a session for `fileSystem` (`fuse_session_new`), not yet mounted.
    ///
    /// - Throws: `EINVAL` if libfuse rejects the options (its message goes to standard error).
    public init(fileSystem: any FileSystemOperations, options: MountOptions = MountOptions()) throws(Errno) {
        operations = OperationsBox(fileSystem)
        var ops = makeLowLevelOperations()
        let arguments = options.arguments
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let userdata = Unmanaged.passUnretained(operations).toOpaque()
        let created = argv.withUnsafeMutableBufferPointer { argv -> OpaquePointer? in
            var args = fuse_args(argc: Int32(arguments.count), argv: argv.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&args) }  // frees only what libfuse allocated
            return fuse_session_new(&args, &ops, MemoryLayout<fuse_lowlevel_ops>.size, userdata)
        }
        guard let created else { throw .EINVAL }
        session = created
    }

    deinit {
        if lifecycle.withReadLock({ $0.state == .mounted }) { fuse_session_unmount(session) }
        fuse_session_destroy(session)
    }

    /// The path this session is (or was last) mounted at.
    public var mountPoint: String? { lifecycle.withReadLock { $0.mountPath } }

    /// Whether the filesystem is mounted: from ``mount(at:)`` until ``run(_:)`` has unmounted it.
    public var isMounted: Bool { lifecycle.withReadLock { $0.isConnected } }

    /// Mounts the filesystem at `path`, an existing directory
    /// (`fuse_session_mount`). Requests wait in the kernel until ``run(_:)``.
    ///
    /// - Throws: `EBUSY` if already mounted once; the `mount(2)` error, or `EIO`, if mounting fails.
    public func mount(at path: String) throws(Errno) {
        try lifecycle.withWriteLock { (lifecycle: inout Lifecycle) throws(Errno) in
            guard lifecycle.state == .created else { throw .EBUSY }
            let canonical = MountTable.canonical(path)
            errno = 0
            guard fuse_session_mount(session, path) == 0 else {
                throw errno == 0 ? .EIO : .current
            }
            lifecycle.mountPath = path
            lifecycle.canonicalMountPath = canonical
            lifecycle.connection = MountTable.fuseConnection(at: canonical).flatMap(FuseControl.Connection.init)
            lifecycle.state = .mounted
        }
    }

    /// Serves requests on the calling thread until the session is stopped
    /// (``stop()``, a signal set up with ``stopOnSignals(_:)``, or an outside
    /// `umount`/`fusermount3 -u`), then unmounts (`fuse_session_unmount`:
    /// requests still queued fail with `ENOTCONN`, the mount point is
    /// detached) and returns.
    ///
    /// Afterwards no filesystem method is running or will be called again,
    /// so the caller can save its state.
    ///
    /// - Throws: `EINVAL` if not mounted or already run; the loop's error if it failed.
    public func run(_ configuration: LoopConfiguration = .multiThreaded()) throws(Errno) {
        let stopEarly = try lifecycle.withWriteLock { (lifecycle: inout Lifecycle) throws(Errno) -> Bool in
            guard lifecycle.state == .mounted else { throw .EINVAL }
            lifecycle.state = .running
            return lifecycle.stopRequested
        }
        var result: Int32 = 0
        if !stopEarly {
            if configuration.singleThreaded {
                result = fuse_session_loop(session)
            } else {
                let config = fuse_loop_cfg_create()
                fuse_loop_cfg_set_max_threads(config, UInt32(max(1, configuration.maxThreads)))
                if let idle = configuration.maxIdleThreads { fuse_loop_cfg_set_idle_threads(config, UInt32(max(0, idle))) }
                fuse_loop_cfg_set_clone_fd(config, configuration.cloneFD ? 1 : 0)
                result = fuse_session_loop_mt(session, config)
                fuse_loop_cfg_destroy(config)
            }
        }
        lifecycle.withWriteLock { lifecycle in
            fuse_session_unmount(session)
            lifecycle.state = .finished
        }
        SignalStopper.shared.unregister(self)
        // libfuse returns -errno on failure, or the number of the signal that ended it.
        if result < 0 { throw Errno(-result) }
    }

    /// Ends ``run(_:)``: marks the session as exiting (`fuse_session_exit`)
    /// and wakes the loop, which then unmounts and returns. Safe from any
    /// thread (also from inside a filesystem method, and from a signal
    /// watcher), any number of times; does not wait for the loop. Before `run`, it makes
    /// `run` unmount and return at once.
    ///
    /// libfuse's loop only notices the exit flag between two requests, so
    /// `stop()` sends one: a `statfs(2)` of the mount point, from a helper
    /// thread. Requests already being answered finish first.
    ///
    /// When the mount point is no longer mounted here (`fusermount3 -u` ran)
    /// while another mount namespace still holds a copy of the mount
    /// (`unshare -m`, `ip netns exec`), no request can reach the loop and the
    /// kernel never ends the connection; then `stop()` aborts it
    /// (`/sys/fs/fuse/connections/N/abort`): the loop ends, and the copies
    /// answer `ENOTCONN`.
    public func stop() {
        let target: (path: String, canonical: String, connection: FuseControl.Connection?)? = lifecycle.withWriteLock { lifecycle in
            lifecycle.stopRequested = true
            guard lifecycle.state == .running, let mountPath = lifecycle.mountPath,
                  let canonicalMountPath = lifecycle.canonicalMountPath else { return nil }
            // A connection the kernel already ended (the loop read ENODEV and
            // set the exit flag) needs nothing more; and its number may
            // already belong to a newer mount, which an abort would kill.
            let ended = fuse_session_exited(session) != 0
            fuse_session_exit(session)
            return ended ? nil : (mountPath, canonicalMountPath, lifecycle.connection)
        }
        guard let target else { return }
        if let connection = target.connection, MountTable.fuseConnection(at: target.canonical) != connection.number {
            connection.abort()
        } else {
            wakeLoop(at: target.path)
        }
    }

    /// Makes any of `signals` call ``stop()`` (through a pipe and a watcher
    /// thread, since the handler itself may do almost nothing); the previous
    /// handlers come back once ``run(_:)`` returns. Without this the caller
    /// handles signals itself and calls ``stop()``.
    public func stopOnSignals(_ signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]) {
        SignalStopper.shared.register(self, signals: signals)
    }

    /// Detaches whatever FUSE mount is at `path`, e.g. one left behind by a
    /// daemon that died (its users see `ENOTCONN`, "Transport endpoint is not
    /// connected"): `umount2(path, MNT_DETACH)` as root, else
    /// `fusermount3 -u -q -z`. Returns whether it succeeded. Not for a live
    /// session: use ``stop()``.
    @discardableResult
    public static func detachStaleMount(at path: String) -> Bool {
        if geteuid() == 0 { return umount2(path, Int32(MNT_DETACH)) == 0 }
        return runQuietly("fusermount3", ["-u", "-q", "-z", "--", path])?.succeeded == true
    }

    /// Calls `body` with libfuse's session while it is connected, for notifications.
    func withConnectedSession(_ body: (OpaquePointer) -> Int32) -> Errno? {
        let result: Int32 = lifecycle.withReadLock { lifecycle in
            guard lifecycle.isConnected else { return -ENOTCONN }
            return body(session)
        }
        return result == 0 ? nil : Errno(-result)
    }
}

/// Sends the mount one request (`stat -f` → `STATFS`, which the kernel never caches),
/// so that a loop blocked in `read(/dev/fuse)` wakes up, answers it and sees its exit flag.
///
/// The request comes from a child process, never from this one: once a
/// worker has read a request, its sender waits for the answer uninterruptibly.
/// Were the daemon killed then (SIGKILL while stopping), a thread of its own
/// waiting there would keep the process, and so its `/dev/fuse`, alive
/// forever: an unkillable process in state D holding its files and locks
/// (seen with a daemon killed while frozen). A child's wait ends when the
/// daemon dies, as the connection closes with it. A detached thread reaps it.
private func wakeLoop(at path: String) {
    guard let argument = strdup(path) else { return }
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { argument in
        let path = argument!.assumingMemoryBound(to: CChar.self)
        defer { free(path) }
        if runQuietly("/usr/bin/stat", ["-f", "--", String(cString: path)]) == nil {
            var buffer = Glibc.statvfs()  // no stat(1): from here, as the last resort
            _ = statvfs(path, &buffer)
        }
        return nil
    }, argument)
    if created == 0 { pthread_detach(thread) } else { free(argument) }
}

/// Runs `program` (looked up on PATH unless it is a path) with `arguments`,
/// its standard streams on /dev/null, and waits for it: how it ended, or nil
/// when it could not be started or waited for.
private func runQuietly(_ program: String, _ arguments: [String]) -> ExitStatus? {
    try? Spawn(program, arguments).run()
}
