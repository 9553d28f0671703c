import Foundation
import FUSEKit
import KVStore
import Synchronization
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
    ExtendedAttributeHandling, StatisticsReporting, Sendable {
    /// How long the kernel may cache entries and attributes: long, because every change is invalidated.
    static let cacheTimeout = 3600.0

    let store: DeviceStore
    let invalidator: Invalidator
    /// The files of `.kvfs/`.
    let controlFiles: ControlFiles
    let owner: (uid: uid_t, gid: gid_t)
    let mountTime = Timestamp.now()
    /// Names, scratch files, open files and listings; never held while calling the kernel.
    let tables: Mutex<FileTables>
    /// `.kvfs/history/`'s inodes and listings; never held with `tables`.
    let history: Mutex<HistoryTables>
    /// How flush asks whether a process still holds a file open; nil until ``mounted(at:)``.
    let processFiles = Mutex<ProcessFiles?>(nil)

    /// A filesystem over `store`, with the given scratch-file globs.
    public init(store: DeviceStore, scratchPatterns: [String], invalidator: Invalidator) {
        self.store = store
        tables = Mutex(FileTables(store: store, scratchPatterns: ScratchPatterns(patterns: scratchPatterns)))
        history = Mutex(HistoryTables(store: store))
        self.invalidator = invalidator
        controlFiles = ControlFiles(store: store)
        owner = (getuid(), getgid())
        Allocator.mapLargeBlocks()
    }

    /// Tells the filesystem where it is mounted (once mounted, before
    /// serving): `mountPoint` with its links resolved, as mountinfo names it
    /// (resolved before mounting: a look at a mount point asks its filesystem).
    public func mounted(at mountPoint: String) {
        let found = ProcessFiles(mountPoint: mountPoint)
        processFiles.withLock { $0 = found }
    }

    public func initialize(_ connection: inout ConnectionInfo) {
        _ = connection.enable(.atomicOTrunc)
        // Our own writes stay cached; pages go only when the Invalidator says so.
        connection.disable([.autoInvalidateData, .writebackCache])
        _ = connection.enable(.explicitInvalidateData)
    }

    // MARK: Helpers shared by the operation files

    /// The key a file name shows, or the errno for a name that is no key.
    static func key(for name: String) throws(Errno) -> StoreKey {
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
