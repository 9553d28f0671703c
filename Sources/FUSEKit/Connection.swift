import CFUSE

/// Features of a FUSE connection (`FUSE_CAP_*`), as offered by the kernel
/// (``ConnectionInfo/capable``) and chosen by the filesystem (``ConnectionInfo/want``).
@frozen
public struct Capabilities: OptionSet, Hashable, Sendable {
    /// The raw `FUSE_CAP_*` bits.
    public var rawValue: UInt32

    /// Wraps raw `FUSE_CAP_*` bits.
    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Several reads of one file may be in flight at once (libfuse default: on).
    public static let asyncRead = Capabilities(rawValue: UInt32(FUSE_CAP_ASYNC_READ))
    /// Remote POSIX locks (only with lock operations, which FUSEKit does not bridge).
    public static let posixLocks = Capabilities(rawValue: UInt32(FUSE_CAP_POSIX_LOCKS))
    /// `O_TRUNC` is passed to `open`, instead of the kernel sending a `setattr`
    /// of size 0 first (libfuse default: on). Turn it off when `open` answers
    /// `ENOSYS` (no `open` at all), or truncation on open is lost.
    public static let atomicOTrunc = Capabilities(rawValue: UInt32(FUSE_CAP_ATOMIC_O_TRUNC))
    /// Lookups of "." and ".." (NFS export).
    public static let exportSupport = Capabilities(rawValue: UInt32(FUSE_CAP_EXPORT_SUPPORT))
    /// The kernel does not apply the umask to `create`/`mkdir` modes.
    public static let dontMask = Capabilities(rawValue: UInt32(FUSE_CAP_DONT_MASK))
    /// Splice writes to the device (no effect without a `write_buf` bridge).
    public static let spliceWrite = Capabilities(rawValue: UInt32(FUSE_CAP_SPLICE_WRITE))
    /// Move pages when splicing (no effect without a `write_buf` bridge).
    public static let spliceMove = Capabilities(rawValue: UInt32(FUSE_CAP_SPLICE_MOVE))
    /// Splice reads from the device.
    public static let spliceRead = Capabilities(rawValue: UInt32(FUSE_CAP_SPLICE_READ))
    /// Remote `flock` locks (only with lock operations).
    public static let flockLocks = Capabilities(rawValue: UInt32(FUSE_CAP_FLOCK_LOCKS))
    /// ioctl on directories.
    public static let ioctlDirectory = Capabilities(rawValue: UInt32(FUSE_CAP_IOCTL_DIR))
    /// The kernel drops a file's cached pages whenever it sees its mtime or
    /// size change in fresh attributes (libfuse default: on). Off together
    /// with ``explicitInvalidateData`` on: pages go only on
    /// ``FUSESession/notifyInvalidateInode(_:offset:length:)``.
    public static let autoInvalidateData = Capabilities(rawValue: UInt32(FUSE_CAP_AUTO_INVAL_DATA))
    /// `readdirplus` (not bridged by FUSEKit; leave off).
    public static let readdirPlus = Capabilities(rawValue: UInt32(FUSE_CAP_READDIRPLUS))
    /// Adaptive `readdirplus` (not bridged by FUSEKit; leave off).
    public static let readdirPlusAuto = Capabilities(rawValue: UInt32(FUSE_CAP_READDIRPLUS_AUTO))
    /// Asynchronous direct I/O.
    public static let asyncDirectIO = Capabilities(rawValue: UInt32(FUSE_CAP_ASYNC_DIO))
    /// Writeback caching: the kernel collects writes and owns the file size.
    /// Wrong for data that changes from outside: the kernel keeps its own size
    /// even after an invalidation.
    public static let writebackCache = Capabilities(rawValue: UInt32(FUSE_CAP_WRITEBACK_CACHE))
    /// The kernel understands an `ENOSYS` answer to `open` as "never send
    /// `open`/`release` again" (read-only: offered, never wanted).
    public static let noOpenSupport = Capabilities(rawValue: UInt32(FUSE_CAP_NO_OPEN_SUPPORT))
    /// Lookups and listings of one directory may run in parallel (libfuse default: on).
    public static let parallelDirectoryOperations = Capabilities(rawValue: UInt32(FUSE_CAP_PARALLEL_DIROPS))
    /// POSIX ACLs, checked by the kernel.
    public static let posixACL = Capabilities(rawValue: UInt32(FUSE_CAP_POSIX_ACL))
    /// The filesystem clears set-uid/set-gid/capabilities on write itself.
    public static let handleKillPriv = Capabilities(rawValue: UInt32(FUSE_CAP_HANDLE_KILLPRIV))
    /// The kernel caches symbolic link targets.
    public static let cacheSymlinks = Capabilities(rawValue: UInt32(FUSE_CAP_CACHE_SYMLINKS))
    /// The kernel understands an `ENOSYS` answer to `opendir` as "never send
    /// `opendir`/`releasedir` again", and then caches listings (read-only: offered, never wanted).
    public static let noOpendirSupport = Capabilities(rawValue: UInt32(FUSE_CAP_NO_OPENDIR_SUPPORT))
    /// Cached pages are dropped only on explicit invalidation (see ``autoInvalidateData``).
    public static let explicitInvalidateData = Capabilities(rawValue: UInt32(FUSE_CAP_EXPLICIT_INVAL_DATA))
    /// `notify_expire_entry` may expire without dropping.
    public static let expireOnly = Capabilities(rawValue: UInt32(FUSE_CAP_EXPIRE_ONLY))
}

/// The connection's parameters, handed to
/// ``ConnectionConfiguring/initialize(_:)`` so the filesystem can choose
/// features before the first request (`struct fuse_conn_info`).
///
/// Change ``want`` with ``enable(_:)`` and ``disable(_:)``: libfuse aborts the
/// session if `want` asks for anything not in ``capable``, and `enable` only
/// turns on what the kernel offers.
///
/// A filesystem whose data changes only through the mount, or whose outside
/// changes it announces, can cache everything and drop pages only when told:
/// ```swift
/// func initialize(_ connection: inout ConnectionInfo) {
///     connection.disable(.autoInvalidateData)
///     connection.enable(.explicitInvalidateData)
///     connection.disable(.writebackCache)
/// }
/// ```
public struct ConnectionInfo: Hashable, Sendable {
    /// FUSE protocol major version spoken by the kernel.
    public let protocolMajor: UInt32
    /// FUSE protocol minor version spoken by the kernel.
    public let protocolMinor: UInt32
    /// What the kernel (and libfuse) can do.
    public let capable: Capabilities
    /// What this session will use; starts with libfuse's defaults and the `-o` options.
    public var want: Capabilities
    /// Largest write request in bytes; libfuse caps it at its receive buffer size.
    public var maxWrite: UInt32
    /// Largest read request in bytes; 0 for no limit beyond the mount's `max_read`.
    public var maxRead: UInt32
    /// Most bytes the kernel reads ahead.
    public var maxReadahead: UInt32
    /// Most background (asynchronous) requests in flight.
    public var maxBackground: UInt32
    /// Background requests at which the kernel considers the filesystem congested.
    public var congestionThreshold: UInt32
    /// Timestamp granularity in nanoseconds the filesystem supports (1 = ns, 0 = unspecified).
    public var timeGranularity: UInt32

    /// Reads a libfuse connection.
    init(_ conn: fuse_conn_info) {
        protocolMajor = conn.proto_major
        protocolMinor = conn.proto_minor
        capable = Capabilities(rawValue: conn.capable)
        want = Capabilities(rawValue: conn.want)
        maxWrite = conn.max_write
        maxRead = conn.max_read
        maxReadahead = conn.max_readahead
        maxBackground = conn.max_background
        congestionThreshold = conn.congestion_threshold
        timeGranularity = conn.time_gran
    }

    /// Writes the changeable fields back into a libfuse connection.
    func apply(to conn: inout fuse_conn_info) {
        conn.want = want.rawValue
        conn.max_write = maxWrite
        conn.max_read = maxRead
        conn.max_readahead = maxReadahead
        conn.max_background = maxBackground
        conn.congestion_threshold = congestionThreshold
        conn.time_gran = timeGranularity
    }

    /// Turns on those of `capabilities` the kernel offers; returns whether all were offered.
    @discardableResult
    public mutating func enable(_ capabilities: Capabilities) -> Bool {
        want.formUnion(capabilities.intersection(capable))
        return capable.isSuperset(of: capabilities)
    }

    /// Turns `capabilities` off.
    public mutating func disable(_ capabilities: Capabilities) {
        want.subtract(capabilities)
    }
}
