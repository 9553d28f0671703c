import Glibc

/// A filesystem served through libfuse's low-level API: one method per FUSE
/// request, addressed by inode number.
///
/// Implement the methods your filesystem needs; every other one has a
/// default (in an extension) that answers as libfuse does for an operation a
/// filesystem leaves out (only `link` differs: `EPERM`, not `ENOSYS`). A method answers by returning a value
/// or by throwing an ``Errno``; ``FUSESession`` turns either into the reply.
///
/// **Concurrency.** With a multi-threaded loop (the default) methods are
/// called concurrently from several libfuse threads, hence `Sendable`:
/// protect shared state with a lock. Never call a ``FUSESession`` notify
/// method from inside one of these methods, nor while holding a lock these
/// methods take (see ``FUSESession/notifyInvalidateInode(_:offset:length:)``).
///
/// **Lookup counts.** Each successful `lookup`, `create`, `mkdir`, `mknod`,
/// `symlink` and `link` that returns a positive ``EntryReply`` adds one to the
/// kernel's lookup count for that inode; ``forget(_:lookups:)`` subtracts. An
/// inode number must stay valid (and keep its data, e.g. for open files of an
/// unlinked name) until its count is back to 0.
///
/// **Answers the kernel remembers.** For some requests an `ENOSYS` answer
/// makes the kernel stop sending that request for the rest of the mount:
/// `flush` (close then sends nothing), `fsync`, `access`, `create` (the
/// kernel falls back to `mknod` + `open`), the xattr operations, `open` and
/// `opendir` (only where ``Capabilities/noOpenSupport`` /
/// ``Capabilities/noOpendirSupport`` is offered: the kernel then opens files
/// by itself, caching data and listings, and sends no `release`/`releasedir`).
/// The defaults follow libfuse: `open`/`opendir` succeed, `flush` and
/// `fsync` answer `ENOSYS`; throw `.ENOSYS` from your own `open` to choose
/// the no-open mode (and then turn ``Capabilities/atomicOTrunc`` off).
///
/// **Strings.** Names arrive as `String`s; a name that is not valid UTF-8 is
/// answered with `EINVAL` before any method is called.
public protocol FileSystemOperations: AnyObject, Sendable {
    /// Called once, before any request, with the connection's parameters:
    /// choose capabilities here. Default: keep libfuse's choices.
    func initialize(_ connection: inout ConnectionInfo)

    /// Looks up `name` in directory `parent` (FUSE `LOOKUP`): the basis of
    /// every path walk. Throw `.ENOENT` for a missing name, or return
    /// ``EntryReply/negative(timeout:)`` to let the kernel cache its absence.
    /// Default: `ENOSYS`.
    func lookup(parent: InodeNumber, name: String, request: Request) throws(Errno) -> EntryReply

    /// The kernel drops `lookups` references to `inode` (FUSE `FORGET` and
    /// `BATCH_FORGET`, folded into one call per inode). No reply. Default: nothing.
    func forget(_ inode: InodeNumber, lookups: UInt64)

    /// Returns a file's attributes (FUSE `GETATTR`, `stat(2)`); `handle` is
    /// set when the kernel asks through an open file (`fstat`). Default: `ENOSYS`.
    func getattr(_ inode: InodeNumber, handle: UInt64?, request: Request) throws(Errno) -> AttributeReply

    /// Changes attributes (FUSE `SETATTR`: `chmod`, `chown`, `truncate`,
    /// `utimensat`...) and returns the new ones; `handle` is set for
    /// `ftruncate` and friends. Default: `ENOSYS`.
    func setattr(_ inode: InodeNumber, changes: AttributeChanges, handle: UInt64?, request: Request) throws(Errno) -> AttributeReply

    /// Returns a symbolic link's target (FUSE `READLINK`). Default: `ENOSYS`.
    func readlink(_ inode: InodeNumber, request: Request) throws(Errno) -> String

    /// Creates a file node (FUSE `MKNOD`); also used for regular files when
    /// `create` answers `ENOSYS`. `mode` has type and permission bits (umask
    /// already applied by the kernel). Default: `ENOSYS`.
    func mknod(parent: InodeNumber, name: String, mode: mode_t, device: dev_t, request: Request) throws(Errno) -> EntryReply

    /// Creates a directory (FUSE `MKDIR`). Default: `ENOSYS`.
    func mkdir(parent: InodeNumber, name: String, mode: mode_t, request: Request) throws(Errno) -> EntryReply

    /// Removes a name (FUSE `UNLINK`). Open files of it stay readable until
    /// released and forgotten. Default: `ENOSYS`.
    func unlink(parent: InodeNumber, name: String, request: Request) throws(Errno)

    /// Removes an empty directory (FUSE `RMDIR`). Default: `ENOSYS`.
    func rmdir(parent: InodeNumber, name: String, request: Request) throws(Errno)

    /// Creates a symbolic link `name` → `target` (FUSE `SYMLINK`). Default: `ENOSYS`.
    func symlink(target: String, parent: InodeNumber, name: String, request: Request) throws(Errno) -> EntryReply

    /// Renames `parent/name` to `newParent/newName` (FUSE `RENAME`/`RENAME2`),
    /// replacing an existing target unless `flags` says otherwise: honour
    /// ``RenameFlags/noReplace`` with `EEXIST`; answer `EINVAL` for flags you
    /// do not support. Default: `ENOSYS`.
    func rename(parent: InodeNumber, name: String, newParent: InodeNumber, newName: String,
                flags: RenameFlags, request: Request) throws(Errno)

    /// Creates a hard link `newParent/newName` to `inode` (FUSE `LINK`). Default: `EPERM`
    /// (the kernel's answer for filesystems without hard links).
    func link(_ inode: InodeNumber, newParent: InodeNumber, newName: String, request: Request) throws(Errno) -> EntryReply

    /// Opens a file (FUSE `OPEN`) and returns a handle that later requests on
    /// this open file carry, with cache options. Default: success, handle 0,
    /// no options (as libfuse). Throw `.ENOSYS` to stop `open`/`release`
    /// for good where the kernel allows it (see the type's notes).
    func open(_ inode: InodeNumber, flags: OpenFlags, request: Request) throws(Errno) -> OpenReply

    /// Reads up to `size` bytes at `offset` (FUSE `READ`).
    ///
    /// Answer by calling `reply` once with the bytes, which are copied to the
    /// kernel before `reply` returns, so they may point into storage guarded
    /// by a lock you hold. Fewer bytes than `size` means end of file; not
    /// calling `reply` (and not throwing) answers 0 bytes. Errors thrown after
    /// `reply` are ignored. Default: `ENOSYS`.
    func read(_ inode: InodeNumber, handle: UInt64, offset: Int64, size: Int, request: Request,
              reply: (UnsafeRawBufferPointer) -> Void) throws(Errno)

    /// Writes `bytes` at `offset` (FUSE `WRITE`) and returns how many bytes
    /// were written. `bytes` points into libfuse's buffer and is valid only
    /// during the call. Default: `ENOSYS`.
    func write(_ inode: InodeNumber, handle: UInt64, offset: Int64, bytes: UnsafeRawBufferPointer,
               request: Request) throws(Errno) -> Int

    /// A file descriptor of this open file is being closed (FUSE `FLUSH`,
    /// once per `close(2)` of each duplicate): the place to commit buffered
    /// writes and report their errors to `close`. Default: `ENOSYS`, which
    /// the kernel remembers: no more `flush` for the mount.
    func flush(_ inode: InodeNumber, handle: UInt64, lockOwner: UInt64, request: Request) throws(Errno)

    /// The last reference to this open file is gone (FUSE `RELEASE`): free
    /// the handle. Errors cannot be reported. Also called when the caller of
    /// an `open`/`create` vanished before the reply reached it. No ``Request``:
    /// the kernel often sends it on behalf of no process. Default: nothing.
    func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags)

    /// Makes a file's data durable (FUSE `FSYNC`); `dataOnly` for `fdatasync`.
    /// Default: `ENOSYS` (remembered by the kernel; `fsync(2)` then succeeds).
    func fsync(_ inode: InodeNumber, handle: UInt64, dataOnly: Bool, request: Request) throws(Errno)

    /// Opens a directory (FUSE `OPENDIR`). Default: success, handle 0, no
    /// options. Throw `.ENOSYS` to stop `opendir`/`releasedir` for good
    /// where the kernel allows it; it then caches listings until
    /// ``FUSESession/notifyInvalidateInode(_:offset:length:)`` on the directory.
    func opendir(_ inode: InodeNumber, flags: OpenFlags, request: Request) throws(Errno) -> OpenReply

    /// Lists a directory (FUSE `READDIR`): return every entry, in a stable
    /// order, including "." and ".." if they should be listed.
    ///
    /// FUSEKit packs the entries into the kernel's buffers and numbers the
    /// offsets itself: it asks once per `opendir` (again after a rewind to
    /// offset 0) and serves the later chunks from that snapshot, so a listing
    /// never skips or repeats a name. Without `opendir` (no-opendir mode)
    /// it asks again for every chunk. Default: `ENOSYS`.
    func readdir(_ inode: InodeNumber, handle: UInt64, request: Request) throws(Errno) -> [DirectoryEntry]

    /// The directory is closed (FUSE `RELEASEDIR`), or its `opendir` reply
    /// did not reach the caller. Default: nothing.
    func releasedir(_ inode: InodeNumber, handle: UInt64)

    /// Returns filesystem statistics (FUSE `STATFS`, `df`). Default: libfuse's
    /// answer, ``FileSystemStatistics/init(blockSize:fragmentSize:blocks:freeBlocks:availableBlocks:files:freeFiles:maximumNameLength:)``
    /// with its default values.
    func statfs(_ inode: InodeNumber, request: Request) throws(Errno) -> FileSystemStatistics

    /// Sets an extended attribute (FUSE `SETXATTR`). Default: `ENOSYS`.
    func setxattr(_ inode: InodeNumber, name: String, value: UnsafeRawBufferPointer,
                  flags: ExtendedAttributeFlags, request: Request) throws(Errno)

    /// Returns an extended attribute's value (FUSE `GETXATTR`); throw
    /// `.ENODATA` for a missing one. FUSEKit handles the size probe and
    /// `ERANGE` protocol of `getxattr(2)`. Default: `ENOSYS`.
    func getxattr(_ inode: InodeNumber, name: String, request: Request) throws(Errno) -> [UInt8]

    /// Returns the names of a file's extended attributes (FUSE `LISTXATTR`);
    /// FUSEKit packs them and handles the size probe. Default: `ENOSYS`.
    func listxattr(_ inode: InodeNumber, request: Request) throws(Errno) -> [String]

    /// Removes an extended attribute (FUSE `REMOVEXATTR`); `.ENODATA` if
    /// missing. Default: `ENOSYS`.
    func removexattr(_ inode: InodeNumber, name: String, request: Request) throws(Errno)

    /// Checks access (FUSE `ACCESS`, `access(2)`; never sent with the
    /// `default_permissions` mount option). `mask` is `R_OK|W_OK|X_OK` or
    /// `F_OK`. Default: `ENOSYS`, which the kernel remembers and treats as "allowed".
    func access(_ inode: InodeNumber, mask: Int32, request: Request) throws(Errno)

    /// Creates and opens a file (FUSE `CREATE`: `open` with `O_CREAT`). Honour
    /// ``OpenFlags/exclusive`` with `EEXIST`. Default: `ENOSYS`, which the
    /// kernel remembers: it then uses `mknod` and `open`.
    func create(parent: InodeNumber, name: String, mode: mode_t, flags: OpenFlags, request: Request) throws(Errno) -> CreateReply
}

extension FileSystemOperations {
    /// Default: keeps libfuse's capability choices.
    public func initialize(_ connection: inout ConnectionInfo) {}

    /// Default: `ENOSYS`.
    public func lookup(parent: InodeNumber, name: String, request: Request) throws(Errno) -> EntryReply {
        throw .ENOSYS
    }

    /// Default: nothing to release.
    public func forget(_ inode: InodeNumber, lookups: UInt64) {}

    /// Default: `ENOSYS`.
    public func getattr(_ inode: InodeNumber, handle: UInt64?, request: Request) throws(Errno) -> AttributeReply {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func setattr(_ inode: InodeNumber, changes: AttributeChanges, handle: UInt64?, request: Request) throws(Errno) -> AttributeReply {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func readlink(_ inode: InodeNumber, request: Request) throws(Errno) -> String {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func mknod(parent: InodeNumber, name: String, mode: mode_t, device: dev_t, request: Request) throws(Errno) -> EntryReply {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func mkdir(parent: InodeNumber, name: String, mode: mode_t, request: Request) throws(Errno) -> EntryReply {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func unlink(parent: InodeNumber, name: String, request: Request) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func rmdir(parent: InodeNumber, name: String, request: Request) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func symlink(target: String, parent: InodeNumber, name: String, request: Request) throws(Errno) -> EntryReply {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func rename(parent: InodeNumber, name: String, newParent: InodeNumber, newName: String,
                       flags: RenameFlags, request: Request) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: `EPERM`.
    public func link(_ inode: InodeNumber, newParent: InodeNumber, newName: String, request: Request) throws(Errno) -> EntryReply {
        throw .EPERM
    }

    /// Default: success with handle 0 and no options, as libfuse without `open`.
    public func open(_ inode: InodeNumber, flags: OpenFlags, request: Request) throws(Errno) -> OpenReply {
        OpenReply()
    }

    /// Default: `ENOSYS`.
    public func read(_ inode: InodeNumber, handle: UInt64, offset: Int64, size: Int, request: Request,
                     reply: (UnsafeRawBufferPointer) -> Void) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func write(_ inode: InodeNumber, handle: UInt64, offset: Int64, bytes: UnsafeRawBufferPointer,
                      request: Request) throws(Errno) -> Int {
        throw .ENOSYS
    }

    /// Default: `ENOSYS` (the kernel then sends no more `flush`).
    public func flush(_ inode: InodeNumber, handle: UInt64, lockOwner: UInt64, request: Request) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: nothing.
    public func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags) {}

    /// Default: `ENOSYS`.
    public func fsync(_ inode: InodeNumber, handle: UInt64, dataOnly: Bool, request: Request) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: success with handle 0 and no options, as libfuse without `opendir`.
    public func opendir(_ inode: InodeNumber, flags: OpenFlags, request: Request) throws(Errno) -> OpenReply {
        OpenReply()
    }

    /// Default: `ENOSYS`.
    public func readdir(_ inode: InodeNumber, handle: UInt64, request: Request) throws(Errno) -> [DirectoryEntry] {
        throw .ENOSYS
    }

    /// Default: nothing.
    public func releasedir(_ inode: InodeNumber, handle: UInt64) {}

    /// Default: libfuse's answer (512-byte blocks, zero counts, 255-byte names).
    public func statfs(_ inode: InodeNumber, request: Request) throws(Errno) -> FileSystemStatistics {
        FileSystemStatistics()
    }

    /// Default: `ENOSYS`.
    public func setxattr(_ inode: InodeNumber, name: String, value: UnsafeRawBufferPointer,
                         flags: ExtendedAttributeFlags, request: Request) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func getxattr(_ inode: InodeNumber, name: String, request: Request) throws(Errno) -> [UInt8] {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func listxattr(_ inode: InodeNumber, request: Request) throws(Errno) -> [String] {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func removexattr(_ inode: InodeNumber, name: String, request: Request) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func access(_ inode: InodeNumber, mask: Int32, request: Request) throws(Errno) {
        throw .ENOSYS
    }

    /// Default: `ENOSYS`.
    public func create(parent: InodeNumber, name: String, mode: mode_t, flags: OpenFlags, request: Request) throws(Errno) -> CreateReply {
        throw .ENOSYS
    }
}
