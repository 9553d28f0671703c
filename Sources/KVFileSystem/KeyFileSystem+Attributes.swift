import FUSEKit
import KVStore

extension KeyFileSystem {
    public func getattr(_ inode: InodeNumber, handle: UInt64?, request: Request) throws(Errno) -> AttributeReply {
        if inode == .root || inode == NodeTable.controlFolder {
            return AttributeReply(folderAttributes(inode), timeout: Self.cacheTimeout)
        }
        if HistoryNodes.contains(inode) { return try historyAttributes(inode) }
        if let control = ControlFile(inode) {
            // Read-only, and never cached: `tail -f` sees the log grow.
            return AttributeReply(fileAttributes(inode, size: control.content(of: store).count, modified: .now(), writable: false), timeout: 0)
        }
        lock.lock()
        defer { lock.unlock() }
        if let handle, let file = files[handle], file.writable {
            return AttributeReply(fileAttributes(inode, size: file.content.count, modified: .now()), timeout: 0)
        }
        guard let name = nodes.name(of: inode) else { throw .ENOENT }
        if let file = scratch[name] {
            return AttributeReply(fileAttributes(inode, size: file.content.count, modified: file.modified), timeout: attributeTimeout(of: inode))
        }
        if let value = FileName.decode(name).flatMap(store.entry(forKey:)) {
            return AttributeReply(fileAttributes(inode, size: value.size, modified: Self.timestamp(value.stamp)), timeout: attributeTimeout(of: inode))
        }
        if let size = pendingSize(of: inode, for: request.context.pid) {
            return AttributeReply(fileAttributes(inode, size: size, modified: .now()), timeout: 0)
        }
        throw .ENOENT
    }

    /// Size changes truncate (an open buffer, or the stored value through a
    /// commit); mode, owner and times are accepted and change nothing, so
    /// `cp -p`, `touch` and `rsync` work.
    public func setattr(_ inode: InodeNumber, changes: AttributeChanges, handle: UInt64?, request: Request) throws(Errno) -> AttributeReply {
        if let size = changes.size {
            if ControlFile(inode) != nil || inode == .root || inode == NodeTable.controlFolder || HistoryNodes.contains(inode) { throw .EACCES }
            try truncate(inode, to: Int(size), handle: handle)
        }
        return try getattr(inode, handle: handle, request: request)
    }

    private func truncate(_ inode: InodeNumber, to size: Int, handle: UInt64?) throws(Errno) {
        let temporary: UInt64 = try locked { () throws(Errno) in
            try checkSize(size, of: inode)
            if let handle, let file = files[handle], file.writable {
                file.resize(to: size)
                return 0
            }
            // truncate(2) by path: a short-lived buffer, committed at once.
            guard let name = nodes.name(of: inode) else { throw .ENOENT }
            let content = scratch[name]?.content ?? FileName.decode(name).flatMap(store.entry(forKey:))?.content
            guard let content else { throw .ENOENT }
            let file = OpenFile(inode: inode, flags: .readWrite, content: content)
            file.resize(to: size)
            return register(file)
        }
        guard temporary != 0 else { return }
        defer { _ = lock.withLock { files.removeValue(forKey: temporary) } }
        try commit(temporary)
    }

    public func statfs(_ inode: InodeNumber, request: Request) throws(Errno) -> FileSystemStatistics {
        // One-byte blocks, so `df -B1` shows the byte quota exactly and `df -i` the key quota.
        let usage = store.usage
        let free = UInt64(max(0, Limits.maxTotalBytes - usage.bytes))
        return FileSystemStatistics(
            blockSize: 1, fragmentSize: 1, blocks: UInt64(Limits.maxTotalBytes), freeBlocks: free, availableBlocks: free,
            files: UInt64(Limits.maxKeys), freeFiles: UInt64(max(0, Limits.maxKeys - usage.keys)), maximumNameLength: 1024)
    }
}
