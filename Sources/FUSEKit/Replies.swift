import CFUSE
import Glibc

/// A file's attributes and how long the kernel may cache them
/// (the answer to `getattr` and `setattr`).
public struct AttributeReply: Hashable, Sendable {
    /// The file's attributes.
    public var attributes: FileAttributes
    /// Seconds the kernel may use these attributes without asking again.
    /// Long timeouts save round trips; outside changes then need
    /// ``FUSESession/notifyInvalidateInode(_:offset:length:)``.
    public var timeout: Double

    /// Creates an attribute reply.
    @inlinable
    public init(_ attributes: FileAttributes, timeout: Double = 1) {
        self.attributes = attributes
        self.timeout = timeout
    }
}

/// A name's meaning and how long the kernel may cache it
/// (the answer to `lookup`, `mkdir`, `mknod`, `symlink`, `link`, and part of `create`).
///
/// Every reply that names an inode (all but ``negative(timeout:)``) adds one
/// to the kernel's lookup count of that inode, which the kernel later gives
/// back with ``LookupCounting/forget(_:lookups:)``.
public struct EntryReply: Hashable, Sendable {
    /// The entry's attributes, or `nil` for a negative entry ("no such name").
    public var attributes: FileAttributes?
    /// Generation number: (inode, generation) must be unique over the
    /// filesystem's lifetime if inode numbers are reused (needed for NFS export only).
    public var generation: UInt64
    /// Seconds the kernel may use ``attributes`` without asking again.
    public var attributeTimeout: Double
    /// Seconds the kernel may use the name → inode mapping (or its absence) without asking again.
    public var entryTimeout: Double

    /// A positive entry: the name refers to the file with these attributes.
    @inlinable
    public init(_ attributes: FileAttributes, attributeTimeout: Double = 1, entryTimeout: Double = 1, generation: UInt64 = 0) {
        self.attributes = attributes
        self.generation = generation
        self.attributeTimeout = attributeTimeout
        self.entryTimeout = entryTimeout
    }

    /// A negative entry from `lookup`: the name does not exist, and the kernel
    /// may remember that for `timeout` seconds instead of asking again (which
    /// `throw Errno.ENOENT` does not allow). A name created from outside the
    /// kernel then needs ``FUSESession/notifyInvalidateEntry(parent:name:)``.
    @inlinable
    public static func negative(timeout: Double) -> EntryReply {
        var reply = EntryReply(FileAttributes(inode: 0, type: .regular, permissions: 0), attributeTimeout: 0, entryTimeout: timeout)
        reply.attributes = nil
        return reply
    }

    /// The reply as libfuse's `fuse_entry_param`.
    @usableFromInline
    var entryParam: fuse_entry_param {
        var param = fuse_entry_param()
        if let attributes {
            param.ino = attributes.inode.rawValue
            param.attr = attributes.stat
        }
        param.generation = generation
        param.attr_timeout = attributeTimeout
        param.entry_timeout = entryTimeout
        return param
    }
}

/// The answer to `open`, `opendir` and part of `create`: a file handle and cache options.
public struct OpenReply: Hashable, Sendable {
    /// Any 64-bit value the filesystem wants back with every later request on
    /// this open file (`fuse_file_info.fh`), e.g. an index into a table of
    /// open files. 0 is fine when the filesystem needs none.
    public var handle: UInt64
    /// How the kernel should cache the file's data or the directory's listing.
    public var options: OpenOptions

    /// Creates an open reply.
    @inlinable
    public init(handle: UInt64 = 0, options: OpenOptions = []) {
        self.handle = handle
        self.options = options
    }

    /// Writes the handle and options into a request's `fuse_file_info`.
    @inlinable
    func apply(to info: UnsafeMutablePointer<fuse_file_info>) {
        info.pointee.fh = handle
        info.pointee.keep_cache = options.contains(.keepCache) ? 1 : 0
        info.pointee.direct_io = options.contains(.directIO) ? 1 : 0
        info.pointee.nonseekable = options.contains(.nonSeekable) ? 1 : 0
        info.pointee.cache_readdir = options.contains(.cacheDirectory) ? 1 : 0
        info.pointee.noflush = options.contains(.noFlush) ? 1 : 0
    }
}

/// The answer to `create`: the new entry and the open file.
public struct CreateReply: Hashable, Sendable {
    /// The created (or, without `O_EXCL`, existing) file; must be positive.
    public var entry: EntryReply
    /// The open file's handle and options.
    public var file: OpenReply

    /// Creates a create reply.
    @inlinable
    public init(entry: EntryReply, file: OpenReply = OpenReply()) {
        self.entry = entry
        self.file = file
    }
}
