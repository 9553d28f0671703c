import CFUSE
import Glibc

/// The `open(2)` flags of a request (`fuse_file_info.flags`).
///
/// The kernel strips some before they get here: `O_CREAT`, `O_EXCL` and
/// `O_NOCTTY` never reach ``FileReading/open(_:flags:request:)``
/// (they do reach `create`), and `O_TRUNC` reaches `open` only when
/// ``Capabilities/atomicOTrunc`` is on; otherwise the kernel truncates with a
/// `setattr` of size 0 first.
@frozen
public struct OpenFlags: OptionSet, Hashable, Sendable {
    /// The raw `O_*` bits.
    public var rawValue: Int32

    /// Wraps raw `O_*` bits.
    @inlinable
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `O_WRONLY`: open for writing only. (Read-only, `O_RDONLY`, is the absence of both.)
    public static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    /// `O_RDWR`: open for reading and writing.
    public static let readWrite = OpenFlags(rawValue: O_RDWR)
    /// `O_CREAT`: create the file if it is missing (seen by `create` only).
    public static let create = OpenFlags(rawValue: O_CREAT)
    /// `O_EXCL`: with `O_CREAT`, fail with `EEXIST` if the file exists.
    public static let exclusive = OpenFlags(rawValue: O_EXCL)
    /// `O_TRUNC`: truncate to size 0 (see the type's notes on `atomicOTrunc`).
    public static let truncate = OpenFlags(rawValue: O_TRUNC)
    /// `O_APPEND`: every write goes to the end. The kernel already supplies
    /// the end-of-file offset with each write.
    public static let append = OpenFlags(rawValue: O_APPEND)
    /// `O_NONBLOCK`.
    public static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    /// `O_SYNC`.
    public static let sync = OpenFlags(rawValue: O_SYNC)

    /// Whether the file was opened for reading (`O_RDONLY` or `O_RDWR`).
    @inlinable
    public var isReadable: Bool { rawValue & O_ACCMODE != O_WRONLY }

    /// Whether the file was opened for writing (`O_WRONLY` or `O_RDWR`).
    @inlinable
    public var isWritable: Bool { rawValue & O_ACCMODE != O_RDONLY }
}

/// How the kernel should treat an open file or directory: the bits an `open`,
/// `create` or `opendir` reply sets in `fuse_file_info`.
@frozen
public struct OpenOptions: OptionSet, Hashable, Sendable {
    /// The options as bits (an encoding private to FUSEKit).
    public var rawValue: UInt32

    /// Wraps raw option bits.
    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `keep_cache`: keep the page cache from earlier opens instead of
    /// dropping it at this open. Right when the data only changes through
    /// this mount, or when outside changes are announced with
    /// ``FUSESession/notifyInvalidateInode(_:offset:length:)``.
    public static let keepCache = OpenOptions(rawValue: 1 << 0)
    /// `direct_io`: bypass the page cache; every `read`/`write` goes to the filesystem.
    public static let directIO = OpenOptions(rawValue: 1 << 1)
    /// `nonseekable`: the file cannot be seeked (like a pipe).
    public static let nonSeekable = OpenOptions(rawValue: 1 << 2)
    /// `cache_readdir` (for `opendir`): let the kernel cache this directory's listing.
    public static let cacheDirectory = OpenOptions(rawValue: 1 << 3)
    /// `noflush`: do not send `flush` when this file is closed (unless it was written with writeback caching).
    public static let noFlush = OpenOptions(rawValue: 1 << 4)
}

/// Flags of a `renameat2(2)` call.
@frozen
public struct RenameFlags: OptionSet, Hashable, Sendable {
    /// The raw `RENAME_*` bits.
    public var rawValue: UInt32

    /// Wraps raw `RENAME_*` bits.
    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `RENAME_NOREPLACE`: fail with `EEXIST` instead of replacing an existing target.
    public static let noReplace = RenameFlags(rawValue: 1 << 0)
    /// `RENAME_EXCHANGE`: atomically swap source and target, which must both exist.
    public static let exchange = RenameFlags(rawValue: 1 << 1)
    /// `RENAME_WHITEOUT`: leave a whiteout at the source (overlay filesystems).
    public static let whiteout = RenameFlags(rawValue: 1 << 2)
}

/// Flags of a `setxattr(2)` call.
@frozen
public struct ExtendedAttributeFlags: OptionSet, Hashable, Sendable {
    /// The raw `XATTR_*` bits.
    public var rawValue: Int32

    /// Wraps raw `XATTR_*` bits.
    @inlinable
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `XATTR_CREATE`: fail with `EEXIST` if the attribute exists.
    public static let create = ExtendedAttributeFlags(rawValue: 1)
    /// `XATTR_REPLACE`: fail with `ENODATA` if the attribute does not exist.
    public static let replace = ExtendedAttributeFlags(rawValue: 2)
}

/// Which attributes a `setattr` request changes (`FUSE_SET_ATTR_*`).
@frozen
public struct SetAttributeFields: OptionSet, Hashable, Sendable {
    /// The raw `FUSE_SET_ATTR_*` bits.
    public var rawValue: Int32

    /// Wraps raw `FUSE_SET_ATTR_*` bits.
    @inlinable
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `chmod`: the mode changes.
    public static let mode = SetAttributeFields(rawValue: FUSE_SET_ATTR_MODE)
    /// `chown`: the owner changes.
    public static let uid = SetAttributeFields(rawValue: FUSE_SET_ATTR_UID)
    /// `chown`/`chgrp`: the group changes.
    public static let gid = SetAttributeFields(rawValue: FUSE_SET_ATTR_GID)
    /// `truncate`/`ftruncate`/`O_TRUNC`: the size changes.
    public static let size = SetAttributeFields(rawValue: FUSE_SET_ATTR_SIZE)
    /// The access time is set to a given time.
    public static let accessTime = SetAttributeFields(rawValue: FUSE_SET_ATTR_ATIME)
    /// The modification time is set to a given time.
    public static let modificationTime = SetAttributeFields(rawValue: FUSE_SET_ATTR_MTIME)
    /// The access time is set to the filesystem's "now".
    public static let accessTimeNow = SetAttributeFields(rawValue: FUSE_SET_ATTR_ATIME_NOW)
    /// The modification time is set to the filesystem's "now".
    public static let modificationTimeNow = SetAttributeFields(rawValue: FUSE_SET_ATTR_MTIME_NOW)
    /// The change time is set to a given time.
    public static let changeTime = SetAttributeFields(rawValue: FUSE_SET_ATTR_CTIME)
    /// The kernel asks the filesystem to clear set-uid (with `handle_killpriv`).
    public static let killSUID = SetAttributeFields(rawValue: FUSE_SET_ATTR_KILL_SUID)
    /// The kernel asks the filesystem to clear set-gid (with `handle_killpriv`).
    public static let killSGID = SetAttributeFields(rawValue: FUSE_SET_ATTR_KILL_SGID)
}

/// A new access or modification time in a `setattr` request.
public enum TimeChange: Hashable, Sendable {
    /// Set to the current time as the filesystem sees it (`utimensat` with `UTIME_NOW`, `touch`).
    case now
    /// Set to this time.
    case time(Timestamp)

    /// The time to store: ``Timestamp/now()`` for `.now`.
    @inlinable
    public var resolved: Timestamp {
        switch self {
        case .now: return .now()
        case .time(let time): return time
        }
    }
}

/// The changes a `setattr` request asks for (`chmod`, `chown`, `truncate`, `utimensat`...).
///
/// A property is `nil` when that attribute is left alone. ``fields`` has
/// every raw bit of the request, including ones without a property here.
public struct AttributeChanges: Hashable, Sendable {
    /// Every `FUSE_SET_ATTR_*` bit of the request.
    public var fields: SetAttributeFields
    /// New mode, as the kernel sends it (the type bits are the file's current ones).
    public var mode: mode_t?
    /// New owner.
    public var uid: uid_t?
    /// New group.
    public var gid: gid_t?
    /// New size in bytes: shrink or zero-extend the file.
    public var size: UInt64?
    /// New access time.
    public var accessTime: TimeChange?
    /// New modification time.
    public var modificationTime: TimeChange?
    /// New change time.
    public var changeTime: Timestamp?

    /// Creates a set of changes; the layer builds these from requests, tests may build their own.
    @inlinable
    public init(
        fields: SetAttributeFields = [], mode: mode_t? = nil, uid: uid_t? = nil, gid: gid_t? = nil,
        size: UInt64? = nil, accessTime: TimeChange? = nil, modificationTime: TimeChange? = nil,
        changeTime: Timestamp? = nil
    ) {
        self.fields = fields
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.size = size
        self.accessTime = accessTime
        self.modificationTime = modificationTime
        self.changeTime = changeTime
    }

    /// Decodes a libfuse `setattr` request.
    @usableFromInline
    init(_ attr: Glibc.stat, toSet: Int32) {
        let fields = SetAttributeFields(rawValue: toSet)
        self.init(fields: fields)
        if fields.contains(.mode) { mode = attr.st_mode }
        if fields.contains(.uid) { uid = attr.st_uid }
        if fields.contains(.gid) { gid = attr.st_gid }
        if fields.contains(.size) { size = UInt64(max(0, attr.st_size)) }
        if fields.contains(.accessTimeNow) {
            accessTime = .now
        } else if fields.contains(.accessTime) {
            accessTime = .time(Timestamp(attr.st_atim))
        }
        if fields.contains(.modificationTimeNow) {
            modificationTime = .now
        } else if fields.contains(.modificationTime) {
            modificationTime = .time(Timestamp(attr.st_mtim))
        }
        if fields.contains(.changeTime) { changeTime = Timestamp(attr.st_ctim) }
    }
}
