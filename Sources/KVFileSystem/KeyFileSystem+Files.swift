import FUSEKit
import KVStore

extension KeyFileSystem {
    /// The largest scratch file kept in memory: editors' swap files, never a store value.
    static let maxScratchBytes = 64 << 20

    public func open(_ inode: InodeNumber, flags: OpenFlags, request: Request) throws(Errno) -> OpenReply {
        if let control = ControlFile(inode) {
            if flags.isWritable { throw .EACCES }
            let file = OpenFile(inode: inode, flags: flags, content: control.content(of: store))
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
            return OpenReply(handle: handle, options: flags.isWritable ? [.keepCache] : [.keepCache, .noFlush])
        }
    }

    public func read(_ inode: InodeNumber, handle: UInt64, offset: Int64, size: Int, request: Request,
                     reply: (UnsafeRawBufferPointer) -> Void) throws(Errno) {
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
        let newSize = max(file.content.count, (file.append ? file.content.count : Int(offset)) + bytes.count)
        try checkSize(newSize, of: inode)
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
        try commit(handle)
    }

    public func fsync(_ inode: InodeNumber, handle: UInt64, dataOnly: Bool, request: Request) throws(Errno) {
        try commit(handle)
        do { try store.flush() } catch { throw Errno(error) }
    }

    public func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags, request: Request) {
        try? commit(handle)
        _ = lock.withLock { files.removeValue(forKey: handle) }
    }

    /// Commits a buffer with writes in it: a scratch file's to memory, a key's to the store.
    /// When the store keeps other bytes than were written (a typed value's
    /// canonical form, or the old value after a refusal), the kernel's cached
    /// size and pages of the file are dropped.
    func commit(_ handle: UInt64) throws(Errno) {
        let pending: (key: String, file: OpenFile)? = try locked { () throws(Errno) in
            guard let file = files[handle], file.dirty else { return nil }
            file.dirty = false
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
        if store.entry(forKey: key)?.content != file.content { invalidator.invalidate(inode: file.inode) }
        if let failure { throw Errno(failure) }
    }

    /// The open writable buffer of a file not yet in the store (created, not yet closed). Called with the lock held.
    func newestWriter(of inode: InodeNumber) -> OpenFile? {
        files.values.filter { $0.inode == inode && $0.writable }.last
    }
}
