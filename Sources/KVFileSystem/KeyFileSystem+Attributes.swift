import FUSEKit
import KVStore

extension KeyFileSystem {
    public func getattr(_ inode: InodeNumber, handle: UInt64?, request: RequestContext) throws(Errno) -> AttributeReply {
        if inode == .root || inode == NodeTable.controlFolder {
            return AttributeReply(folderAttributes(inode), timeout: Self.cacheTimeout)
        }
        if HistoryNodes.contains(inode) { return try historyAttributes(inode) }
        if let control = ControlFile(inode) {
            // Read-only, and never cached: `tail -f` sees the log grow.
            let file = controlFiles[control]
            let size = file.size(for: handle, asker: request.pid)
            return AttributeReply(fileAttributes(inode, size: size, modified: file.modified, writable: false), timeout: 0)
        }
        return try tables.withLock { tables throws(Errno) in
            tables.noteAttributesGiven()
            if let handle, let file = tables.files[handle], file.writable {
                return AttributeReply(fileAttributes(inode, size: file.content.count, modified: .now()), timeout: 0)
            }
            guard let name = tables.nodes.name(of: inode) else { throw .ENOENT }
            let timeout = tables.attributeTimeout(of: inode)
            if let file = tables.scratch[name] {
                return AttributeReply(fileAttributes(inode, size: file.content.count, modified: file.modified), timeout: timeout)
            }
            if let value = FileName.decode(name).flatMap(store.entry(forKey:)) {
                return AttributeReply(fileAttributes(inode, size: value.size, modified: Self.timestamp(value.stamp)), timeout: timeout)
            }
            if let size = tables.pendingSize(of: inode, for: request.pid) {
                return AttributeReply(fileAttributes(inode, size: size, modified: .now()), timeout: 0)
            }
            throw .ENOENT
        }
    }

    /// Size changes truncate (an open buffer, or the stored value through a
    /// commit); mode, owner and times are accepted and change nothing, so
    /// `cp -p`, `touch` and `rsync` work.
    public func setattr(_ inode: InodeNumber, changes: AttributeChanges, handle: UInt64?, request: RequestContext) throws(Errno) -> AttributeReply {
        if let size = changes.size {
            if ControlFile(inode) != nil || inode == .root || inode == NodeTable.controlFolder || HistoryNodes.contains(inode) { throw .EACCES }
            try truncate(inode, to: Int(size), handle: handle)
        }
        return try getattr(inode, handle: handle, request: request)
    }

    private func truncate(_ inode: InodeNumber, to size: Int, handle: UInt64?) throws(Errno) {
        let temporary: UInt64 = try tables.withLock { tables throws(Errno) in
            try tables.checkSize(size, of: inode)
            if let handle, let file = tables.files[handle], file.writable {
                file.resize(to: size)
                file.attributesGivenAtWrite = tables.attributesGiven
                return 0
            }
            // truncate(2) by path: a short-lived buffer, committed at once.
            guard let name = tables.nodes.name(of: inode), let content = tables.content(of: name) else { throw .ENOENT }
            let file = OpenFile(inode: inode, flags: .readWrite, content: content)
            file.resize(to: size)
            return tables.register(file)
        }
        guard temporary != 0 else { return }
        defer { tables.withLock { _ = $0.files.removeValue(forKey: temporary) } }
        try commit(temporary)
    }

    public func statfs(_ inode: InodeNumber, request: RequestContext) throws(Errno) -> FileSystemStatistics {
        // One-byte blocks, so `df -B1` shows the byte quota exactly and `df -i` the key quota.
        let usage = store.usage
        let free = UInt64(max(0, Limits.maxTotalBytes - usage.bytes))
        return FileSystemStatistics(
            blockSize: 1, fragmentSize: 1, blocks: UInt64(Limits.maxTotalBytes), freeBlocks: free, availableBlocks: free,
            files: UInt64(Limits.maxKeys), freeFiles: UInt64(max(0, Limits.maxKeys - usage.keys)), maximumNameLength: 1024)
    }
}
