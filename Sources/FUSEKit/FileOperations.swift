import Glibc

/// A filesystem whose files can be opened and read (see ``FileSystemOperations`` for the groups).
public protocol FileReading: FileSystemOperations {
    /// Opens a file (FUSE `OPEN`) and returns a handle that later requests on
    /// this open file carry, with cache options. Throw `.ENOSYS` to stop
    /// `open`/`release` for good where the kernel allows it (see
    /// ``FileSystemOperations``).
    func open(_ inode: InodeNumber, flags: OpenFlags, request: RequestContext) throws(Errno) -> OpenReply

    /// Reads up to `size` bytes at `offset` (FUSE `READ`).
    ///
    /// Answer by calling `reply` once with the bytes, which are copied to the
    /// kernel before `reply` returns, so they may point into storage guarded
    /// by a lock you hold. Fewer bytes than `size` means end of file; not
    /// calling `reply` (and not throwing) answers 0 bytes. Errors thrown after
    /// `reply` are ignored.
    func read(_ inode: InodeNumber, handle: UInt64, offset: Int64, size: Int, request: RequestContext,
              reply: (UnsafeRawBufferPointer) -> Void) throws(Errno)

    /// The last reference to this open file is gone (FUSE `RELEASE`): free
    /// the handle. Errors cannot be reported. Also called when the caller of
    /// an `open`/`create` vanished before the reply reached it. No ``RequestContext``:
    /// the kernel often sends it on behalf of no process.
    func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags)
}

/// A filesystem whose files can be written (see ``FileSystemOperations`` for the groups).
public protocol FileWriting: FileReading {
    /// Writes `bytes` at `offset` (FUSE `WRITE`) and returns how many bytes
    /// were written. `bytes` points into libfuse's buffer and is valid only
    /// during the call.
    func write(_ inode: InodeNumber, handle: UInt64, offset: Int64, bytes: UnsafeRawBufferPointer,
               request: RequestContext) throws(Errno) -> Int

    /// A file descriptor of this open file is being closed (FUSE `FLUSH`,
    /// once per `close(2)` of each duplicate): the place to commit buffered
    /// writes and report their errors to `close`. `ENOSYS` is remembered by
    /// the kernel: no more `flush` for the mount.
    func flush(_ inode: InodeNumber, handle: UInt64, lockOwner: UInt64, request: RequestContext) throws(Errno)

    /// Makes a file's data durable (FUSE `FSYNC`); `dataOnly` for `fdatasync`.
    /// `ENOSYS` is remembered by the kernel; `fsync(2)` then succeeds.
    func fsync(_ inode: InodeNumber, handle: UInt64, dataOnly: Bool, request: RequestContext) throws(Errno)

    /// Changes attributes (FUSE `SETATTR`: `chmod`, `chown`, `truncate`,
    /// `utimensat`...) and returns the new ones; `handle` is set for
    /// `ftruncate` and friends.
    func setattr(_ inode: InodeNumber, changes: AttributeChanges, handle: UInt64?, request: RequestContext) throws(Errno) -> AttributeReply
}
