import Foundation
import FUSEKit
import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// The filesystem: each key a file in the mount's root, `.kvfs/` beside them.
///
/// Reads come from the store's memory; writes go to a private buffer per open
/// file and are committed to the store on flush, fsync or release, where the
/// store types, checks and journals them. Editors' scratch files live in
/// memory here until renamed onto a key's name.
///
/// The kernel caches entries, attributes and pages for an hour
/// (``cacheTimeout``); whatever changes them from outside — another device,
/// or a commit whose stored form differs from the bytes written — is
/// invalidated explicitly through the ``Invalidator``, never while a lock is held.
public final class KeyFileSystem: ConnectionConfiguring, LookupCounting, FileWriting, DirectoryReading, NameChanging,
    ExtendedAttributeHandling, StatisticsReporting, @unchecked Sendable {
    /// How long the kernel may cache entries and attributes: long, because every change is invalidated.
    static let cacheTimeout = 3600.0

    let store: DeviceStore
    let scratchPatterns: ScratchPatterns
    let invalidator: Invalidator
    let owner: (uid: uid_t, gid: gid_t)
    let mountTime = Timestamp.now()
    /// Guards the tables below; never held while calling the kernel.
    let lock = NSLock()
    var nodes = NodeTable()
    var scratch: [String: (content: [UInt8], modified: Timestamp)] = [:]
    var files: [UInt64: OpenFile] = [:]
    var directories: [UInt64: [DirectoryEntry]] = [:]
    var nextHandle: UInt64 = 1
    /// The inodes of `.kvfs/history/`, and the keys' listings last made there.
    var historyNodes = HistoryNodes()
    var historyListings: [String: HistoryListing] = [:]
    /// How flush asks whether a process still holds a file open; nil until ``mounted(at:)``.
    var processFiles: ProcessFiles?

    /// A filesystem over `store`, with the given scratch-file globs.
    public init(store: DeviceStore, scratchPatterns: [String], invalidator: Invalidator) {
        self.store = store
        self.scratchPatterns = ScratchPatterns(patterns: scratchPatterns)
        self.invalidator = invalidator
        owner = (getuid(), getgid())
        Allocator.mapLargeBlocks()
    }

    /// Tells the filesystem where it is mounted (once mounted, before
    /// serving): `mountPoint` with its links resolved, as mountinfo names it
    /// (resolved before mounting: a look at a mount point asks its filesystem).
    public func mounted(at mountPoint: String) {
        let found = ProcessFiles(mountPoint: mountPoint)
        lock.withLock { processFiles = found }
    }

    public func initialize(_ connection: inout ConnectionInfo) {
        _ = connection.enable(.atomicOTrunc)
        // Our own writes stay cached; pages go only when the Invalidator says so.
        connection.disable([.autoInvalidateData, .writebackCache])
        _ = connection.enable(.explicitInvalidateData)
    }

    // MARK: Helpers shared by the operation files

    /// Runs `body` with the lock held, passing its Errno through.
    func locked<Result>(_ body: () throws(Errno) -> Result) throws(Errno) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// How long the kernel may keep the attributes of a key or scratch file:
    /// ``cacheTimeout``, but not while the file is open for writing. A commit
    /// changes its size and mtime, and the kernel drops its copy only at the
    /// writer's own writes: attributes fetched between the last write and the
    /// close (a `stat` meanwhile) would show the old size for an hour. Called with the lock held.
    func attributeTimeout(of inode: InodeNumber) -> Double {
        hasWriter(inode) ? 0 : Self.cacheTimeout
    }

    /// A new file or folder handle. Called with the lock held.
    func newHandle() -> UInt64 {
        defer { nextHandle += 1 }
        return nextHandle
    }

    /// Keeps an open file under a new handle. Called with the lock held.
    func register(_ file: OpenFile) -> UInt64 {
        let handle = newHandle()
        files[handle] = file
        return handle
    }

    /// The key a file name shows, or the errno for a name that is no key.
    static func key(for name: String) throws(Errno) -> String {
        guard let key = FileName.decode(name) else { throw .EINVAL }
        do {
            try QuotaUsage.checkKey(key)
        } catch {
            throw .ENAMETOOLONG
        }
        return key
    }

    /// Attributes of a regular file.
    func fileAttributes(_ inode: InodeNumber, size: Int, modified: Timestamp, writable: Bool = true) -> FileAttributes {
        FileAttributes(inode: inode, type: .regular, permissions: writable ? 0o644 : 0o444, linkCount: 1,
                       uid: owner.uid, gid: owner.gid, size: UInt64(size),
                       accessTime: modified, modificationTime: modified, changeTime: modified)
    }

    /// Attributes of a folder.
    func folderAttributes(_ inode: InodeNumber) -> FileAttributes {
        FileAttributes(inode: inode, type: .directory, permissions: 0o755, linkCount: 2,
                       uid: owner.uid, gid: owner.gid, accessTime: mountTime, modificationTime: mountTime, changeTime: mountTime)
    }

    static func timestamp(_ stamp: Stamp) -> Timestamp {
        let milliseconds = Int(stamp.time.milliseconds)
        return Timestamp(seconds: milliseconds / 1000, nanoseconds: milliseconds % 1000 * 1_000_000)
    }
}
