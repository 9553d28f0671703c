import Glibc

/// A filesystem served through libfuse's low-level API: one method per FUSE
/// request, addressed by inode number, answering by returning a value or by
/// throwing an ``Errno``; ``FUSESession`` turns either into the reply.
///
/// This protocol has the two requests every filesystem answers, `lookup`
/// and `getattr`. The others come in groups, each a protocol of its own
/// with no default implementation: a filesystem conforms to the groups it
/// implements, and writes every method of each. A method whose signature is
/// slightly off (a missing label, another type) then fails to compile
/// instead of leaving the request to a silent default. For a group a
/// filesystem does not conform to, FUSEKit answers as libfuse does for an
/// operation left out:
///
/// | group | requests | answer without it |
/// |---|---|---|
/// | ``ConnectionConfiguring`` | `initialize` | libfuse's capability choices |
/// | ``LookupCounting`` | `forget` | nothing |
/// | ``FileReading`` | `open`, `read`, `release` | `open` succeeds (handle 0); `read` `ENOSYS` |
/// | ``FileWriting`` | `write`, `flush`, `fsync`, `setattr` | `ENOSYS` |
/// | ``DirectoryReading`` | `opendir`, `readdir`, `releasedir` | `opendir` succeeds (handle 0); `readdir` `ENOSYS` |
/// | ``NameChanging`` | `create`, `mknod`, `mkdir`, `unlink`, `rmdir`, `rename`, `symlink`, `link` | `ENOSYS` (`link`: `EPERM`, as the kernel answers for filesystems without hard links) |
/// | ``LinkReading`` | `readlink` | `ENOSYS` |
/// | ``ExtendedAttributeHandling`` | `setxattr`, `getxattr`, `listxattr`, `removexattr` | `ENOSYS` |
/// | ``StatisticsReporting`` | `statfs` | libfuse's answer (512-byte blocks, counts 0, names up to 255 bytes) |
/// | ``AccessChecking`` | `access` | `ENOSYS` |
///
/// **Concurrency.** With a multi-threaded loop (the default) methods are
/// called concurrently from several libfuse threads, hence `Sendable`:
/// protect shared state with a lock. Never call a ``FUSESession`` notify
/// method from inside one of these methods, nor while holding a lock these
/// methods take (see ``FUSESession/notifyInvalidateInode(_:offset:length:)``).
///
/// **Lookup counts.** Each successful `lookup`, `create`, `mkdir`, `mknod`,
/// `symlink` and `link` that returns a positive ``EntryReply`` adds one to the
/// kernel's lookup count for that inode; ``LookupCounting/forget(_:lookups:)``
/// subtracts. An inode number must stay valid (and keep its data, e.g. for
/// open files of an unlinked name) until its count is back to 0.
///
/// **Answers the kernel remembers.** For some requests an `ENOSYS` answer
/// makes the kernel stop sending that request for the rest of the mount:
/// `flush` (close then sends nothing), `fsync`, `access`, `create` (the
/// kernel falls back to `mknod` + `open`), the xattr operations, `open` and
/// `opendir` (only where ``Capabilities/noOpenSupport`` /
/// ``Capabilities/noOpendirSupport`` is offered: the kernel then opens files
/// by itself, caching data and listings, and sends no `release`/`releasedir`).
/// Throw `.ENOSYS` from your own `open` to choose the no-open mode (and then
/// turn ``Capabilities/atomicOTrunc`` off).
///
/// **Strings.** Names arrive as `String`s; a name that is not valid UTF-8 is
/// answered with `EINVAL` before any method is called.
public protocol FileSystemOperations: AnyObject, Sendable {
    /// Looks up `name` in directory `parent` (FUSE `LOOKUP`): the basis of
    /// every path walk. Throw `.ENOENT` for a missing name, or return
    /// ``EntryReply/negative(timeout:)`` to let the kernel cache its absence.
    func lookup(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) -> EntryReply

    /// Returns a file's attributes (FUSE `GETATTR`, `stat(2)`); `handle` is
    /// set when the kernel asks through an open file (`fstat`).
    func getattr(_ inode: InodeNumber, handle: UInt64?, request: RequestContext) throws(Errno) -> AttributeReply
}

/// A filesystem that chooses the connection's features (see ``FileSystemOperations`` for the groups).
public protocol ConnectionConfiguring: FileSystemOperations {
    /// Called once, before any request, with the connection's parameters:
    /// choose capabilities here.
    func initialize(_ connection: inout ConnectionInfo)
}

/// A filesystem whose inodes come and go, and which must know when the
/// kernel no longer refers to one (see ``FileSystemOperations`` for the groups).
public protocol LookupCounting: FileSystemOperations {
    /// The kernel drops `lookups` references to `inode` (FUSE `FORGET` and
    /// `BATCH_FORGET`, folded into one call per inode). No reply.
    func forget(_ inode: InodeNumber, lookups: UInt64)
}

/// A filesystem that reads symbolic links (see ``FileSystemOperations`` for the groups).
public protocol LinkReading: FileSystemOperations {
    /// Returns a symbolic link's target (FUSE `READLINK`).
    func readlink(_ inode: InodeNumber, request: RequestContext) throws(Errno) -> String
}

/// A filesystem that reports its size and free space (see ``FileSystemOperations`` for the groups).
public protocol StatisticsReporting: FileSystemOperations {
    /// Returns filesystem statistics (FUSE `STATFS`, `df`).
    func statfs(_ inode: InodeNumber, request: RequestContext) throws(Errno) -> FileSystemStatistics
}

/// A filesystem that checks `access(2)` itself (see ``FileSystemOperations`` for the groups).
public protocol AccessChecking: FileSystemOperations {
    /// Checks access (FUSE `ACCESS`, `access(2)`; never sent with the
    /// `default_permissions` mount option). `mask` is `R_OK|W_OK|X_OK` or
    /// `F_OK`. An `ENOSYS` answer is remembered and treated as "allowed".
    func access(_ inode: InodeNumber, mask: Int32, request: RequestContext) throws(Errno)
}

/// A filesystem with extended attributes (see ``FileSystemOperations`` for the groups).
public protocol ExtendedAttributeHandling: FileSystemOperations {
    /// Sets an extended attribute (FUSE `SETXATTR`).
    func setxattr(_ inode: InodeNumber, name: String, value: UnsafeRawBufferPointer,
                  flags: ExtendedAttributeFlags, request: RequestContext) throws(Errno)

    /// Returns an extended attribute's value (FUSE `GETXATTR`); throw
    /// `.ENODATA` for a missing one. FUSEKit handles the size probe and
    /// `ERANGE` protocol of `getxattr(2)`.
    func getxattr(_ inode: InodeNumber, name: String, request: RequestContext) throws(Errno) -> [UInt8]

    /// Returns the names of a file's extended attributes (FUSE `LISTXATTR`);
    /// FUSEKit packs them and handles the size probe.
    func listxattr(_ inode: InodeNumber, request: RequestContext) throws(Errno) -> [String]

    /// Removes an extended attribute (FUSE `REMOVEXATTR`); `.ENODATA` if missing.
    func removexattr(_ inode: InodeNumber, name: String, request: RequestContext) throws(Errno)
}
