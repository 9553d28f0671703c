import FUSEKit
import KVStore
#if canImport(Glibc)
import Glibc
#endif

extension KeyFileSystem {
    /// How every key and scratch file is opened: direct I/O, so each read is
    /// served from the handle's own buffer. The kernel's page cache is one per
    /// file and writers' writes (and O_TRUNC, which sets the cached size to 0)
    /// land in it before they are committed; readers served from it saw a
    /// writer's half-written, truncated or interleaved buffers. (Shared
    /// mmap of a key is refused with ENODEV as a result; private mmap works.)
    static let keyFileOptions: OpenOptions = [.directIO]

    public func open(_ inode: InodeNumber, flags: OpenFlags, request: RequestContext) throws(Errno) -> OpenReply {
        if HistoryNodes.contains(inode) { return try openVersion(inode, flags: flags) }
        if let control = ControlFile(inode) {
            if flags.isWritable { throw .EACCES }
            let handle = tables.withLock { $0.newHandle() }
            controlFiles[control].open(handle, opener: request.pid)
            return OpenReply(handle: handle, options: [.directIO, .noFlush])
        }
        return try tables.withLock { tables throws(Errno) in
            guard let name = tables.nodes.name(of: inode) else { throw .ENOENT }
            let content: [UInt8]
            if let stored = tables.content(of: name) {
                content = stored
            } else if tables.hasWriter(inode) {
                content = []  // created, not yet committed: empty to all but its writer
            } else {
                throw .ENOENT
            }
            let handle = tables.register(OpenFile(inode: inode, flags: flags, content: content, opener: request.pid))
            // A reader's close has nothing to commit: no FLUSH round trip for it.
            return OpenReply(handle: handle, options: flags.isWritable ? Self.keyFileOptions : Self.keyFileOptions.union(.noFlush))
        }
    }

    public func read(_ inode: InodeNumber, handle: UInt64, offset: Int64, size: Int, request: RequestContext,
                     reply: (UnsafeRawBufferPointer) -> Void) throws(Errno) {
        if let control = ControlFile(inode) {
            controlFiles[control].read(handle, offset: Int(offset), size: size, reply: reply)
            return
        }
        // The buffer is copied on write, so a read serves its content as it was, without the lock.
        let content = try tables.withLock { tables throws(Errno) in
            guard let file = tables.files[handle] else { throw .EBADF }
            return file.content
        }
        OpenFile.read(content, offset: Int(offset), size: size, reply: reply)
    }

    public func write(_ inode: InodeNumber, handle: UInt64, offset: Int64, bytes: UnsafeRawBufferPointer,
                      request: RequestContext) throws(Errno) -> Int {
        // libfuse's buffer, valid for this call, which copies from it before it returns.
        nonisolated(unsafe) let bytes = bytes
        return try tables.withLock { tables throws(Errno) in
            guard let file = tables.files[handle], file.writable else { throw .EBADF }
            if let refusal = file.refusal { throw refusal }
            let newSize = max(file.content.count, (file.append ? file.content.count : Int(offset)) + bytes.count)
            do throws(Errno) {
                try tables.checkSize(newSize, of: inode, handle: handle)
            } catch {
                file.refusal = error  // the writes before this one are not a value to commit
                throw error
            }
            file.write(bytes, at: Int(offset))
            file.attributesGivenAtWrite = tables.attributesGiven
            return bytes.count
        }
    }

    /// Commits the buffer: every close commits, except a close after which
    /// the closing process, or the one that opened the file, still holds it
    /// open for writing while the buffer holds nothing but open's O_TRUNC or
    /// O_CREAT (see ``ProcessFiles``): that bare truncation waits for the
    /// close that ends the redirection, or for `RELEASE` when `/proc` cannot tell.
    public func flush(_ inode: InodeNumber, handle: UInt64, lockOwner: UInt64, request: RequestContext) throws(Errno) {
        let (bare, opener): (Bool, pid_t) = tables.withLock { tables in
            guard let file = tables.files[handle] else { return (false, 0) }
            return (file.dirty && !file.written, file.opener)
        }
        let processFiles = processFiles.withLock { $0 }
        let mustWait = bare && processFiles?.mustWait(inode.rawValue, closer: request.pid, opener: opener) != false
        try commit(handle, onlyWritten: mustWait)
    }

    public func fsync(_ inode: InodeNumber, handle: UInt64, dataOnly: Bool, request: RequestContext) throws(Errno) {
        try commit(handle)
        do { try store.flush() } catch { throw Errno(error) }
    }

    /// Commits what is left (a bare O_TRUNC or O_CREAT whose last close was
    /// not this process's, see ``flush``) and drops the buffer.
    public func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags) {
        if let control = ControlFile(inode) { return controlFiles[control].release(handle) }
        try? commit(handle)
        tables.withLock { _ = $0.files.removeValue(forKey: handle) }
    }

    /// Commits a buffer with writes in it: a scratch file's to memory, a key's to the store.
    /// When the store keeps other bytes than were written (a typed value's
    /// canonical form, the old value after a refusal), the kernel's cached
    /// size of the file is dropped. A buffer one of whose writes was refused
    /// is never committed: its refusal is thrown again.
    ///
    /// A create whose value is refused leaves the name free, as it was.
    ///
    /// - Parameter onlyWritten: commit only what write() or ftruncate() put in
    ///   the buffer, leaving a bare O_TRUNC or O_CREAT to a later commit.
    func commit(_ handle: UInt64, onlyWritten: Bool = false) throws(Errno) {
        do throws(Errno) {
            try commitBuffer(handle, onlyWritten: onlyWritten)
        } catch {
            freeNameIfNeverCommitted(handle)
            throw error
        }
    }

    private func commitBuffer(_ handle: UInt64, onlyWritten: Bool) throws(Errno) {
        // `shown`: whether the kernel may hold attributes of the file that its last write did not make it drop.
        typealias Pending = (key: StoreKey?, inode: InodeNumber, content: [UInt8], bare: Bool, shown: Bool)
        let pending: Pending? = try tables.withLock { tables throws(Errno) in
            guard let file = tables.files[handle] else { return nil }
            if let refusal = file.refusal { throw refusal }
            guard file.dirty, file.written || !onlyWritten else { return nil }
            let bare = !file.written
            let shown = tables.attributesGiven(since: file)
            file.dirty = false
            file.written = false
            guard let name = tables.nodes.name(of: file.inode) else { return nil }  // unlinked while open
            if tables.scratch[name] != nil {
                tables.scratch[name] = (file.content, .now())
                return (nil, file.inode, file.content, bare, shown)
            }
            return (try Self.key(for: name), file.inode, file.content, bare, shown)
        }
        guard let (key, inode, content, bare, shown) = pending else { return }
        // A commit with no write before it: the kernel still holds the
        // attributes `create` gave (size, mtime), which it drops only at a write.
        guard let key else {
            if bare { invalidator.invalidate(inode: inode) }
            return
        }
        var failure: KVStoreError?
        do { try store.setFileContent(content, forKey: key) } catch { failure = error }
        // The kernel sized the file by what was written; when the store keeps
        // other bytes (a canonical form, a refusal), its size must go. A write
        // (and an ftruncate) makes the kernel drop the size and times it had,
        // so they must go only if attributes were handed out since (a stat
        // meanwhile): else the notification, a system call and the kernel's
        // work on every commit of text without its newline, is skipped.
        if bare || shown && store.entry(forKey: key)?.content != content { invalidator.invalidate(inode: inode) }
        if let failure { throw Errno(failure) }
    }

    /// After a refused commit: if the file's name holds no key and no other
    /// writer's buffer (a refused create), the name goes, here and in the
    /// kernel's cache of entries, so the next create, `rm` or `cat` of it
    /// meets no leftover of the refused one.
    private func freeNameIfNeverCommitted(_ handle: UInt64) {
        let name: String? = tables.withLock { tables in
            guard let file = tables.files[handle], let name = tables.nodes.name(of: file.inode), tables.content(of: name) == nil,
                  !tables.files.contains(where: { $0.key != handle && $0.value.inode == file.inode && $0.value.writable })
            else { return nil }
            tables.nodes.unname(name)
            return name
        }
        if let name { invalidator.invalidate(name: name) }
    }
}
