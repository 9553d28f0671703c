import FUSEKit
import KVStore

extension KeyFileSystem {
    /// The largest scratch file kept in memory: editors' swap files, never a store value.
    static let maxScratchBytes = 64 << 20

    /// How every key and scratch file is opened: direct I/O, so each read is
    /// served from the handle's own buffer. The kernel's page cache is one per
    /// file and writers' writes (and O_TRUNC, which sets the cached size to 0)
    /// land in it before they are committed; readers served from it saw a
    /// writer's half-written, truncated or interleaved buffers. (Shared
    /// mmap of a key is refused with ENODEV as a result; private mmap works.)
    static let keyFileOptions: OpenOptions = [.directIO]

    public func open(_ inode: InodeNumber, flags: OpenFlags, request: Request) throws(Errno) -> OpenReply {
        if let control = ControlFile(inode) {
            if flags.isWritable { throw .EACCES }
            // The status is read as one document, as it was at open; the log is read live (see `read`).
            let file = OpenFile(inode: inode, flags: flags, content: control == .status ? control.content(of: store) : [])
            return OpenReply(handle: lock.withLock { register(file) }, options: [.directIO, .noFlush])
        }
        return try locked { () throws(Errno) in
            guard let name = nodes.name(of: inode) else { throw .ENOENT }
            let content: [UInt8]
            if let file = scratch[name] {
                content = file.content
            } else if let value = FileName.decode(name).flatMap(store.entry(forKey:)) {
                content = value.content
            } else if let pending = newestWriter(of: inode) {
                content = pending.content
            } else {
                throw .ENOENT
            }
            let handle = register(OpenFile(inode: inode, flags: flags, content: content))
            // A reader's close has nothing to commit: no FLUSH round trip for it.
            return OpenReply(handle: handle, options: flags.isWritable ? Self.keyFileOptions : Self.keyFileOptions.union(.noFlush))
        }
    }

    public func read(_ inode: InodeNumber, handle: UInt64, offset: Int64, size: Int, request: Request,
                     reply: (UnsafeRawBufferPointer) -> Void) throws(Errno) {
        if ControlFile(inode) == .changeLog {
            // Read live, not from a snapshot at open: `tail -f` keeps its descriptor and reads what was appended.
            OpenFile.read(ControlFile.changeLog.content(of: store), offset: Int(offset), size: size, reply: reply)
            return
        }
        lock.lock()
        defer { lock.unlock() }
        guard let file = files[handle] else { throw .EBADF }
        file.read(offset: Int(offset), size: size, reply: reply)
    }

    public func write(_ inode: InodeNumber, handle: UInt64, offset: Int64, bytes: UnsafeRawBufferPointer,
                      request: Request) throws(Errno) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard let file = files[handle], file.writable else { throw .EBADF }
        if let refusal = file.refusal { throw refusal }
        let newSize = max(file.content.count, (file.append ? file.content.count : Int(offset)) + bytes.count)
        do throws(Errno) {
            try checkSize(newSize, of: inode)
        } catch {
            file.refusal = error  // the writes before this one are not a value to commit
            throw error
        }
        file.write(bytes, at: Int(offset))
        return bytes.count
    }

    /// EDQUOT as soon as a buffer would pass a limit once committed. Called with the lock held.
    func checkSize(_ size: Int, of inode: InodeNumber) throws(Errno) {
        guard let name = nodes.name(of: inode) else { return }
        if scratch[name] != nil {
            if size > Self.maxScratchBytes { throw .EFBIG }
            return
        }
        guard let key = FileName.decode(name) else { return }
        do { try store.checkQuota(forKey: key, size: size) } catch { throw Errno(error) }
    }

    public func flush(_ inode: InodeNumber, handle: UInt64, lockOwner: UInt64, request: Request) throws(Errno) {
        try commit(handle, onlyWritten: true)
    }

    public func fsync(_ inode: InodeNumber, handle: UInt64, dataOnly: Bool, request: Request) throws(Errno) {
        try commit(handle)
        do { try store.flush() } catch { throw Errno(error) }
    }

    /// Commits what is left (a bare O_TRUNC or O_CREAT that no flush
    /// committed) and drops the buffer. Its signature must be FUSEKit's
    /// exactly (no `request:`), or the protocol's empty default runs instead.
    public func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags) {
        try? commit(handle)
        _ = lock.withLock { files.removeValue(forKey: handle) }
    }

    /// Commits a buffer with writes in it: a scratch file's to memory, a key's to the store.
    /// When the store keeps other bytes than were written (a typed value's
    /// canonical form, the old value after a refusal), the kernel's cached
    /// size of the file is dropped. A buffer one of whose writes was refused
    /// is never committed: its refusal is thrown again.
    ///
    /// - Parameter onlyWritten: commit only what write() or ftruncate() put in
    ///   the buffer, leaving a bare O_TRUNC or O_CREAT to a later commit (flush).
    func commit(_ handle: UInt64, onlyWritten: Bool = false) throws(Errno) {
        let pending: (key: String, file: OpenFile)? = try locked { () throws(Errno) in
            guard let file = files[handle] else { return nil }
            if let refusal = file.refusal { throw refusal }
            guard file.dirty, file.written || !onlyWritten else { return nil }
            file.dirty = false
            file.written = false
            guard let name = nodes.name(of: file.inode) else { return nil }  // unlinked while open
            if scratch[name] != nil {
                scratch[name] = (file.content, .now())
                return nil
            }
            return (try Self.key(for: name), file)
        }
        guard let (key, file) = pending else { return }
        var failure: KVStoreError?
        do { try store.setFileContent(file.content, forKey: key) } catch { failure = error }
        // The kernel sized the file by what was written; when the store keeps
        // other bytes (a canonical form, a refusal), its size must go.
        if store.entry(forKey: key)?.content != file.content { invalidator.invalidate(inode: file.inode) }
        if let failure { throw Errno(failure) }
    }

    /// The open writable buffer of a file not yet in the store (created, not yet closed). Called with the lock held.
    func newestWriter(of inode: InodeNumber) -> OpenFile? {
        files.values.filter { $0.inode == inode && $0.writable }.last
    }
}
