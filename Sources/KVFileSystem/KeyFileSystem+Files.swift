import FUSEKit
import KVStore
#if canImport(Glibc)
import Glibc
#endif

extension KeyFileSystem {
    /// The most memory editors' scratch files may take together, in the
    /// folder and in open buffers: past it a write answers ENOSPC, as a full disk does.
    static let maxScratchBytes = 64 << 20

    /// How every key and scratch file is opened: direct I/O, so each read is
    /// served from the handle's own buffer. The kernel's page cache is one per
    /// file and writers' writes (and O_TRUNC, which sets the cached size to 0)
    /// land in it before they are committed; readers served from it saw a
    /// writer's half-written, truncated or interleaved buffers. (Shared
    /// mmap of a key is refused with ENODEV as a result; private mmap works.)
    static let keyFileOptions: OpenOptions = [.directIO]

    public func open(_ inode: InodeNumber, flags: OpenFlags, request: Request) throws(Errno) -> OpenReply {
        if HistoryNodes.contains(inode) { return try openVersion(inode, flags: flags) }
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
            } else if hasWriter(inode) {
                content = []  // created, not yet committed: empty to all but its writer
            } else {
                throw .ENOENT
            }
            let handle = register(OpenFile(inode: inode, flags: flags, content: content, opener: request.context.pid))
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
            try checkSize(newSize, of: inode, handle: handle)
        } catch {
            file.refusal = error  // the writes before this one are not a value to commit
            throw error
        }
        file.write(bytes, at: Int(offset))
        return bytes.count
    }

    /// EDQUOT as soon as a key's buffer would pass a limit once committed;
    /// ENOSPC as soon as scratch files would take more than their share of
    /// memory. `handle` is the buffer growing to `size`, if any. Called with the lock held.
    func checkSize(_ size: Int, of inode: InodeNumber, handle: UInt64? = nil) throws(Errno) {
        guard let name = nodes.name(of: inode) else { return }
        if scratch[name] != nil {
            if scratchBytes(besides: handle) + size > Self.maxScratchBytes { throw .ENOSPC }
            return
        }
        guard let key = FileName.decode(name) else { return }
        do { try store.checkQuota(forKey: key, size: size) } catch { throw Errno(error) }
    }

    /// The memory scratch files take: their stored content and every open
    /// writable buffer of one, but `handle`'s. Called with the lock held.
    private func scratchBytes(besides handle: UInt64?) -> Int {
        let stored = scratch.values.reduce(0) { $0 + $1.content.count }
        let buffers = files.lazy.filter { $0.key != handle && $0.value.writable }
            .filter { self.nodes.name(of: $0.value.inode).map { self.scratch[$0] != nil } ?? true }
            .reduce(0) { $0 + $1.value.content.count }
        return stored + buffers
    }

    /// Commits the buffer: every close commits, except a close after which
    /// the closing process, or the one that opened the file, still holds it
    /// open for writing while the buffer holds nothing but open's O_TRUNC or
    /// O_CREAT (see ``ProcessFiles``): that bare truncation waits for the
    /// close that ends the redirection, or for `RELEASE` when `/proc` cannot tell.
    public func flush(_ inode: InodeNumber, handle: UInt64, lockOwner: UInt64, request: Request) throws(Errno) {
        let (bare, opener, processFiles): (Bool, pid_t, ProcessFiles?) = lock.withLock {
            guard let file = files[handle] else { return (false, 0, nil) }
            return (file.dirty && !file.written, file.opener, self.processFiles)
        }
        let mustWait = bare && processFiles?.mustWait(inode.rawValue, closer: request.context.pid, opener: opener) != false
        try commit(handle, onlyWritten: mustWait)
    }

    public func fsync(_ inode: InodeNumber, handle: UInt64, dataOnly: Bool, request: Request) throws(Errno) {
        try commit(handle)
        do { try store.flush() } catch { throw Errno(error) }
    }

    /// Commits what is left (a bare O_TRUNC or O_CREAT whose last close was
    /// not this process's, see ``flush``) and drops the buffer.
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
        let pending: (key: String?, file: OpenFile, bare: Bool)? = try locked { () throws(Errno) in
            guard let file = files[handle] else { return nil }
            if let refusal = file.refusal { throw refusal }
            guard file.dirty, file.written || !onlyWritten else { return nil }
            let bare = !file.written
            file.dirty = false
            file.written = false
            guard let name = nodes.name(of: file.inode) else { return nil }  // unlinked while open
            if scratch[name] != nil {
                scratch[name] = (file.content, .now())
                return (nil, file, bare)
            }
            return (try Self.key(for: name), file, bare)
        }
        guard let (key, file, bare) = pending else { return }
        // A commit with no write before it: the kernel still holds the
        // attributes `create` gave (size, mtime), which it drops only at a write.
        guard let key else {
            if bare { invalidator.invalidate(inode: file.inode) }
            return
        }
        var failure: KVStoreError?
        do { try store.setFileContent(file.content, forKey: key) } catch { failure = error }
        // The kernel sized the file by what was written; when the store keeps
        // other bytes (a canonical form, a refusal), its size must go.
        if bare || store.entry(forKey: key)?.content != file.content { invalidator.invalidate(inode: file.inode) }
        if let failure { throw Errno(failure) }
    }

    /// After a refused commit: if the file's name holds no key and no other
    /// writer's buffer (a refused create), the name goes, here and in the
    /// kernel's cache of entries, so the next create, `rm` or `cat` of it
    /// meets no leftover of the refused one.
    private func freeNameIfNeverCommitted(_ handle: UInt64) {
        let name: String? = lock.withLock {
            guard let file = files[handle], let name = nodes.name(of: file.inode), scratch[name] == nil,
                  FileName.decode(name).flatMap(store.entry(forKey:)) == nil,
                  !files.contains(where: { $0.key != handle && $0.value.inode == file.inode && $0.value.writable }) else { return nil }
            nodes.unname(name)
            return name
        }
        if let name { invalidator.invalidate(name: name) }
    }

    /// Whether a file not in the store has a writer (created, not yet committed). Called with the lock held.
    func hasWriter(_ inode: InodeNumber) -> Bool {
        files.values.contains { $0.inode == inode && $0.writable }
    }

    /// What a key being created, not yet committed, shows to `process`: its
    /// own buffer's size to the process writing it, else empty. Called with the lock held.
    func pendingSize(of inode: InodeNumber, for process: pid_t) -> Int? {
        let writers = files.values.filter { $0.inode == inode && $0.writable }
        guard !writers.isEmpty else { return nil }
        return writers.last { $0.opener == process && process != 0 }?.content.count ?? 0
    }
}
