import Glibc

/// A filesystem whose directories can be listed (see ``FileSystemOperations`` for the groups).
public protocol DirectoryReading: FileSystemOperations {
    /// Opens a directory (FUSE `OPENDIR`). Throw `.ENOSYS` to stop
    /// `opendir`/`releasedir` for good where the kernel allows it; it then
    /// caches listings until
    /// ``FUSESession/notifyInvalidateInode(_:offset:length:)`` on the directory.
    func opendir(_ inode: InodeNumber, flags: OpenFlags, request: RequestContext) throws(Errno) -> OpenReply

    /// Lists a directory (FUSE `READDIR`): return every entry, in a stable
    /// order, including "." and ".." if they should be listed.
    ///
    /// FUSEKit packs the entries into the kernel's buffers and numbers the
    /// offsets itself: it asks once per `opendir` (again after a rewind to
    /// offset 0) and serves the later chunks from that snapshot, so a listing
    /// never skips or repeats a name. Without `opendir` (no-opendir mode)
    /// it asks again for every chunk.
    func readdir(_ inode: InodeNumber, handle: UInt64, request: RequestContext) throws(Errno) -> [DirectoryEntry]

    /// The directory is closed (FUSE `RELEASEDIR`), or its `opendir` reply
    /// did not reach the caller.
    func releasedir(_ inode: InodeNumber, handle: UInt64)
}

/// A filesystem whose names can be made and removed (see ``FileSystemOperations`` for the groups).
public protocol NameChanging: FileSystemOperations {
    /// Creates and opens a file (FUSE `CREATE`: `open` with `O_CREAT`). Honour
    /// ``OpenFlags/exclusive`` with `EEXIST`. `ENOSYS` is remembered by the
    /// kernel: it then uses `mknod` and `open`.
    func create(parent: InodeNumber, name: String, mode: mode_t, flags: OpenFlags, request: RequestContext) throws(Errno) -> CreateReply

    /// Creates a file node (FUSE `MKNOD`); also used for regular files when
    /// `create` answers `ENOSYS`. `mode` has type and permission bits (umask
    /// already applied by the kernel).
    func mknod(parent: InodeNumber, name: String, mode: mode_t, device: dev_t, request: RequestContext) throws(Errno) -> EntryReply

    /// Creates a directory (FUSE `MKDIR`).
    func mkdir(parent: InodeNumber, name: String, mode: mode_t, request: RequestContext) throws(Errno) -> EntryReply

    /// Removes a name (FUSE `UNLINK`). Open files of it stay readable until
    /// released and forgotten.
    func unlink(parent: InodeNumber, name: String, request: RequestContext) throws(Errno)

    /// Removes an empty directory (FUSE `RMDIR`).
    func rmdir(parent: InodeNumber, name: String, request: RequestContext) throws(Errno)

    /// Renames `parent/name` to `newParent/newName` (FUSE `RENAME`/`RENAME2`),
    /// replacing an existing target unless `flags` says otherwise: honour
    /// ``RenameFlags/noReplace`` with `EEXIST`; answer `EINVAL` for flags you
    /// do not support.
    func rename(parent: InodeNumber, name: String, newParent: InodeNumber, newName: String,
                flags: RenameFlags, request: RequestContext) throws(Errno)

    /// Creates a symbolic link `name` → `target` (FUSE `SYMLINK`).
    func symlink(target: String, parent: InodeNumber, name: String, request: RequestContext) throws(Errno) -> EntryReply

    /// Creates a hard link `newParent/newName` to `inode` (FUSE `LINK`);
    /// `EPERM` is the kernel's answer for filesystems without hard links.
    func link(_ inode: InodeNumber, newParent: InodeNumber, newName: String, request: RequestContext) throws(Errno) -> EntryReply
}
