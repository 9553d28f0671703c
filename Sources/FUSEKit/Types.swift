import CFUSE
import Glibc

/// A FUSE inode number: the kernel's name for a file, chosen by the filesystem.
///
/// ``root`` (1) is the mount's root directory; 0 is never a valid inode and
/// means "no such entry" in a negative ``EntryReply``. Any other number is the
/// filesystem's to assign; it must stay valid until the kernel has forgotten
/// it (see ``LookupCounting/forget(_:lookups:)``).
@frozen
public struct InodeNumber: RawRepresentable, Hashable, Comparable, Sendable,
    ExpressibleByIntegerLiteral, CustomStringConvertible
{
    /// The number as libfuse sees it (`fuse_ino_t`).
    public var rawValue: UInt64

    /// Wraps a raw inode number.
    @inlinable
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Wraps a raw inode number.
    @inlinable
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Creates an inode number from an integer literal.
    @inlinable
    public init(integerLiteral value: UInt64) { self.rawValue = value }

    /// The root directory of every FUSE mount (`FUSE_ROOT_ID`, 1).
    public static let root = InodeNumber(1)

    /// Orders inode numbers by their raw value.
    @inlinable
    public static func < (lhs: InodeNumber, rhs: InodeNumber) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The decimal number.
    public var description: String { rawValue.description }
}

/// A point in time with nanosecond resolution, as in `struct timespec`.
@frozen
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Whole seconds since the Unix epoch (negative before it).
    public var seconds: Int
    /// Nanoseconds past ``seconds``, 0 ..< 1_000_000_000.
    public var nanoseconds: Int

    /// Creates a timestamp from seconds and nanoseconds since the Unix epoch.
    @inlinable
    public init(seconds: Int, nanoseconds: Int = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// Converts a C `timespec`.
    @inlinable
    public init(_ time: timespec) {
        self.seconds = time.tv_sec
        self.nanoseconds = time.tv_nsec
    }

    /// The Unix epoch, 1970-01-01 00:00:00 UTC.
    public static let zero = Timestamp(seconds: 0)

    /// The current wall-clock time (`CLOCK_REALTIME`).
    @inlinable
    public static func now() -> Timestamp {
        var time = Glibc.timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Timestamp(time)
    }

    /// The same instant as a C `timespec`.
    @inlinable
    public var timespec: Glibc.timespec { Glibc.timespec(tv_sec: seconds, tv_nsec: nanoseconds) }

    /// Orders timestamps chronologically.
    @inlinable
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// `seconds.nanoseconds`, e.g. `1700000000.000000001`.
    public var description: String {
        let fraction = String(nanoseconds)
        return "\(seconds).\(String(repeating: "0", count: max(0, 9 - fraction.count)))\(fraction)"
    }
}

/// The type of a file: the `S_IFMT` bits of a mode.
@frozen
public struct FileType: RawRepresentable, Hashable, Sendable {
    /// The `S_IFMT` bits, e.g. `S_IFREG`.
    public var rawValue: mode_t

    /// Wraps `S_IF*` bits; other bits are dropped.
    @inlinable
    public init(rawValue: mode_t) { self.rawValue = rawValue & S_IFMT }

    /// The type part of a full mode (`mode & S_IFMT`).
    @inlinable
    public init(mode: mode_t) { self.init(rawValue: mode) }

    /// A regular file (`S_IFREG`).
    public static let regular = FileType(rawValue: S_IFREG)
    /// A directory (`S_IFDIR`).
    public static let directory = FileType(rawValue: S_IFDIR)
    /// A symbolic link (`S_IFLNK`).
    public static let symbolicLink = FileType(rawValue: S_IFLNK)
    /// A named pipe (`S_IFIFO`).
    public static let fifo = FileType(rawValue: S_IFIFO)
    /// A socket (`S_IFSOCK`).
    public static let socket = FileType(rawValue: S_IFSOCK)
    /// A character device (`S_IFCHR`).
    public static let characterDevice = FileType(rawValue: S_IFCHR)
    /// A block device (`S_IFBLK`).
    public static let blockDevice = FileType(rawValue: S_IFBLK)
}

/// What `stat(2)` reports about a file, as the filesystem tells the kernel.
///
/// Only the fields here reach the kernel through FUSE (`st_dev` is the
/// mount's). ``blocks`` defaults to the size in 512-byte units, rounded up.
public struct FileAttributes: Hashable, Sendable {
    /// The file's inode number (`st_ino`).
    public var inode: InodeNumber
    /// The file's type (the `S_IFMT` bits of `st_mode`).
    public var type: FileType
    /// Permission bits, including set-uid/set-gid/sticky (`st_mode & 07777`).
    public var permissions: mode_t
    /// Number of hard links (`st_nlink`); 0 for an unlinked but still open file.
    public var linkCount: UInt32
    /// Owner's user ID (`st_uid`).
    public var uid: uid_t
    /// Owner's group ID (`st_gid`).
    public var gid: gid_t
    /// Size in bytes (`st_size`).
    public var size: UInt64
    /// Allocated size in 512-byte blocks (`st_blocks`).
    public var blocks: UInt64
    /// Preferred I/O size (`st_blksize`); 0 lets the kernel use its default.
    public var blockSize: UInt32
    /// Device number for character and block devices (`st_rdev`).
    public var device: dev_t
    /// Last access (`st_atim`).
    public var accessTime: Timestamp
    /// Last change of the contents (`st_mtim`).
    public var modificationTime: Timestamp
    /// Last change of the contents or the attributes (`st_ctim`).
    public var changeTime: Timestamp

    /// Creates attributes; unspecified times are the Unix epoch and
    /// `blocks` defaults to `size` in 512-byte units, rounded up.
    @inlinable
    public init(
        inode: InodeNumber, type: FileType, permissions: mode_t,
        linkCount: UInt32 = 1, uid: uid_t = 0, gid: gid_t = 0, size: UInt64 = 0,
        blocks: UInt64? = nil, blockSize: UInt32 = 0, device: dev_t = 0,
        accessTime: Timestamp = .zero, modificationTime: Timestamp = .zero, changeTime: Timestamp = .zero
    ) {
        self.inode = inode
        self.type = type
        self.permissions = permissions & 0o7777
        self.linkCount = linkCount
        self.uid = uid
        self.gid = gid
        self.size = size
        self.blocks = blocks ?? (size + 511) / 512
        self.blockSize = blockSize
        self.device = device
        self.accessTime = accessTime
        self.modificationTime = modificationTime
        self.changeTime = changeTime
    }

    /// The full `st_mode`: type bits and permission bits.
    @inlinable
    public var mode: mode_t { type.rawValue | permissions }

    /// The attributes as a C `struct stat`, for libfuse.
    @inlinable
    public var stat: Glibc.stat {
        var st = Glibc.stat()
        st.st_ino = UInt(inode.rawValue)
        st.st_mode = mode
        st.st_nlink = UInt(linkCount)
        st.st_uid = uid
        st.st_gid = gid
        st.st_size = Int(truncatingIfNeeded: size)
        st.st_blocks = Int(truncatingIfNeeded: blocks)
        st.st_blksize = Int(blockSize)
        st.st_rdev = device
        st.st_atim = accessTime.timespec
        st.st_mtim = modificationTime.timespec
        st.st_ctim = changeTime.timespec
        return st
    }
}

/// One name in a directory listing returned by ``DirectoryReading/readdir(_:handle:request:)``.
public struct DirectoryEntry: Hashable, Sendable {
    /// The entry's name: one path component, no `/`, not empty.
    public var name: String
    /// The inode the name refers to (`d_ino`). The kernel shows it to
    /// `readdir(3)` callers but does not trust it: it still looks names up.
    public var inode: InodeNumber
    /// The entry's type (`d_type`).
    public var type: FileType

    /// Creates a directory entry.
    @inlinable
    public init(name: String, inode: InodeNumber, type: FileType) {
        self.name = name
        self.inode = inode
        self.type = type
    }
}

/// What `statfs(2)` / `df` report about the filesystem.
///
/// These are exactly the fields FUSE carries; sizes are counted in units of
/// ``fragmentSize`` (which `df` multiplies by).
public struct FileSystemStatistics: Hashable, Sendable {
    /// Preferred block size for I/O (`f_bsize`).
    public var blockSize: UInt
    /// Fundamental block size: the unit of the block counts (`f_frsize`);
    /// 0 means "same as ``blockSize``".
    public var fragmentSize: UInt
    /// Total size in fragments (`f_blocks`).
    public var blocks: UInt64
    /// Free fragments (`f_bfree`).
    public var freeBlocks: UInt64
    /// Free fragments available to unprivileged users (`f_bavail`).
    public var availableBlocks: UInt64
    /// Total number of inodes (`f_files`).
    public var files: UInt64
    /// Free inodes (`f_ffree`).
    public var freeFiles: UInt64
    /// Longest file name, in bytes (`f_namemax`).
    public var maximumNameLength: UInt

    /// Creates statistics; the defaults are what libfuse answers for a
    /// filesystem without `statfs` (512-byte blocks, all counts 0, names up to 255 bytes).
    @inlinable
    public init(
        blockSize: UInt = 512, fragmentSize: UInt = 0, blocks: UInt64 = 0, freeBlocks: UInt64 = 0,
        availableBlocks: UInt64 = 0, files: UInt64 = 0, freeFiles: UInt64 = 0, maximumNameLength: UInt = 255
    ) {
        self.blockSize = blockSize
        self.fragmentSize = fragmentSize
        self.blocks = blocks
        self.freeBlocks = freeBlocks
        self.availableBlocks = availableBlocks
        self.files = files
        self.freeFiles = freeFiles
        self.maximumNameLength = maximumNameLength
    }

    /// The statistics as a C `struct statvfs`, for libfuse.
    @inlinable
    public var statvfs: Glibc.statvfs {
        var st = Glibc.statvfs()
        st.f_bsize = blockSize
        st.f_frsize = fragmentSize == 0 ? blockSize : fragmentSize
        st.f_blocks = UInt(truncatingIfNeeded: blocks)
        st.f_bfree = UInt(truncatingIfNeeded: freeBlocks)
        st.f_bavail = UInt(truncatingIfNeeded: availableBlocks)
        st.f_files = UInt(truncatingIfNeeded: files)
        st.f_ffree = UInt(truncatingIfNeeded: freeFiles)
        st.f_favail = UInt(truncatingIfNeeded: freeFiles)
        st.f_namemax = maximumNameLength
        return st
    }
}
