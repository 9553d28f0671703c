import FUSEKit
import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// What a name in the mount's root stands for.
enum RootName {
    case controlFolder
    case scratch
    case key(StoreKey)
}

extension KeyFileSystem {
    public func lookup(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) -> EntryReply {
        if parent == NodeTable.controlFolder {
            switch name {
            case "status": return entry(try getattr(NodeTable.status, handle: nil, request: request))
            case "changes.log": return entry(try getattr(NodeTable.changeLog, handle: nil, request: request))
            case Self.historyFolderName: return entry(try historyAttributes(HistoryNodes.folder))
            default: return .negative(timeout: 0)
            }
        }
        if HistoryNodes.contains(parent) { return try lookupHistory(parent: parent, name: name) }
        guard parent == .root else { throw .ENOTDIR }
        return try tables.withLock { tables throws(Errno) in
            tables.noteAttributesGiven()
            switch try tables.classify(name) {
            case .controlFolder:
                return entry(AttributeReply(folderAttributes(NodeTable.controlFolder), timeout: Self.cacheTimeout))
            case .scratch:
                guard let file = tables.scratch[name] else { return .negative(timeout: Self.cacheTimeout) }
                let inode = tables.nodes.lookUp(name)
                return entry(AttributeReply(fileAttributes(inode, size: file.content.count, modified: file.modified),
                                            timeout: tables.attributeTimeout(of: inode)))
            case let .key(key):
                if let value = store.entry(forKey: key) {
                    let inode = tables.nodes.lookUp(name)
                    return entry(AttributeReply(fileAttributes(inode, size: value.size, modified: Self.timestamp(value.stamp)),
                                                timeout: tables.attributeTimeout(of: inode)))
                }
                if let inode = tables.nodes.inode(of: name), let size = tables.pendingSize(of: inode, for: request.pid) {
                    return entry(AttributeReply(fileAttributes(tables.nodes.lookUp(name), size: size, modified: .now()), timeout: 0))
                }
                return .negative(timeout: Self.cacheTimeout)
            }
        }
    }

    private func entry(_ attributes: AttributeReply) -> EntryReply {
        EntryReply(attributes.attributes, attributeTimeout: attributes.timeout, entryTimeout: Self.cacheTimeout)
    }

    public func forget(_ inode: InodeNumber, lookups: UInt64) {
        if HistoryNodes.contains(inode) {
            history.withLock { $0.nodes.forget(inode, count: lookups) }
        } else {
            tables.withLock { $0.nodes.forget(inode, count: lookups) }
        }
    }

    public func create(parent: InodeNumber, name: String, mode: mode_t, flags: OpenFlags, request: RequestContext) throws(Errno) -> CreateReply {
        guard parent == .root else { throw .EACCES }
        return try tables.withLock { tables throws(Errno) in
            tables.noteAttributesGiven()
            // What the file is now to everyone but this writer: its content and mtime.
            let shown: (content: [UInt8], modified: Timestamp)
            var isNew = false
            switch try tables.classify(name) {
            case .controlFolder:
                throw .EEXIST
            case .scratch:
                if tables.scratch[name] != nil && flags.contains(.exclusive) { throw .EEXIST }
                isNew = tables.scratch[name] == nil
                if isNew { tables.scratch[name] = ([], .now()) }
                shown = tables.scratch[name]!
            case let .key(key):
                let existing = store.entry(forKey: key)
                if existing != nil && flags.contains(.exclusive) { throw .EEXIST }
                if existing == nil {
                    do throws(KVStoreError) { try store.checkQuota(forKey: key, size: 0) } catch { throw Errno(error) }
                    isNew = true
                }
                shown = existing.map { ($0.content, Self.timestamp($0.stamp)) } ?? ([], .now())
            }
            let inode = tables.nodes.lookUp(name)
            let file = OpenFile(inode: inode, flags: flags, content: shown.content, isNew: isNew, opener: request.pid)
            let handle = tables.register(file)
            // The kernel may keep these attributes: they hold until this handle's
            // first write (after which the kernel drops them itself) or its
            // commit (a commit without a write drops them, see `commitBuffer`).
            // So the writer's own fstat (stdio's, before the first write) costs no GETATTR.
            let attributes = fileAttributes(inode, size: shown.content.count, modified: shown.modified)
            return CreateReply(entry: EntryReply(attributes, attributeTimeout: Self.cacheTimeout, entryTimeout: Self.cacheTimeout),
                               file: OpenReply(handle: handle, options: Self.keyFileOptions))
        }
    }

    public func unlink(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) {
        guard parent == .root else { throw .EACCES }
        try tables.withLock { tables throws(Errno) in
            switch try tables.classify(name) {
            case .controlFolder:
                throw .EISDIR
            case .scratch:
                guard tables.scratch.remove(name) != nil else { throw .ENOENT }
                Allocator.trim()  // a swap file can be tens of megabytes: give them back
            case let .key(key):
                if store.entry(forKey: key) != nil {
                    do throws(KVStoreError) { try store.removeValue(forKey: key) } catch { throw Errno(error) }
                } else if !(tables.nodes.inode(of: name).map(tables.hasWriter) ?? false) {
                    throw .ENOENT
                }
                // Else created and not committed yet (vim's `.swpx` probe): unnamed, it never will be.
            }
            tables.nodes.unname(name)
        }
    }

    /// Commits the open buffers of `name` that hold only open's O_CREAT or
    /// O_TRUNC, which flush leaves to release (see ``OpenFile/written``), so
    /// an operation right after the close (`: > tmp && mv tmp k`) finds what
    /// the close meant rather than racing the kernel's asynchronous release.
    func commitUnwritten(_ name: String) {
        let handles: [UInt64] = tables.withLock { tables in
            guard let inode = tables.nodes.inode(of: name) else { return [] }
            return tables.files.filter { $0.value.inode == inode && $0.value.dirty && !$0.value.written }.map(\.key)
        }
        for handle in handles { try? commit(handle) }
    }

    public func rename(parent: InodeNumber, name: String, newParent: InodeNumber, newName: String,
                       flags: RenameFlags, request: RequestContext) throws(Errno) {
        guard parent == .root, newParent == .root else { throw .EXDEV }
        if flags.contains(.exchange) { throw .EINVAL }
        let replace = !flags.contains(.noReplace)
        commitUnwritten(name)
        let changedInode = try tables.withLock { tables throws(Errno) in
            do {
                return try rename(name, to: newName, replace: replace, in: &tables)
            } catch let error as Errno {
                throw error
            } catch let error as KVStoreError {
                throw Errno(error)
            } catch {
                throw .EIO
            }
        }
        if let changedInode { invalidator.invalidate(inode: changedInode) }
    }

    /// Renames within the root, a key or a scratch file to a key or a
    /// scratch file; returns the inode of a scratch file renamed onto a key
    /// whose stored form differs from its bytes (the kernel's copy must go).
    private func rename(_ name: String, to newName: String, replace: Bool,
                        in tables: inout FileTables) throws -> InodeNumber? {
        var changedInode: InodeNumber?
        switch (try tables.classify(name), try tables.classify(newName)) {
        case (.controlFolder, _), (_, .controlFolder):
            throw Errno.EPERM
        case let (.key(from), .key(to)):
            try store.rename(from, to: to, replace: replace)
        case let (.scratch, .key(to)):
            guard let file = tables.scratch[name] else { throw Errno.ENOENT }
            if !replace && store.entry(forKey: to) != nil { throw Errno.EEXIST }
            try store.setFileContent(file.content, forKey: to)
            tables.scratch[name] = nil
            if store.entry(forKey: to)?.content != file.content { changedInode = tables.nodes.inode(of: name) }
        case let (.key(from), .scratch):
            guard let value = store.entry(forKey: from) else { throw Errno.ENOENT }
            if !replace && tables.scratch[newName] != nil { throw Errno.EEXIST }
            try store.removeValue(forKey: from)
            tables.scratch[newName] = (value.content, Self.timestamp(value.stamp))
        case (.scratch, .scratch):
            guard let file = tables.scratch.remove(name) else { throw Errno.ENOENT }
            if !replace && tables.scratch[newName] != nil {
                tables.scratch[name] = file
                throw Errno.EEXIST
            }
            tables.scratch[newName] = file
        }
        tables.nodes.rename(name, to: newName)
        return changedInode
    }

    public func mkdir(parent: InodeNumber, name: String, mode: mode_t, request: RequestContext) throws(Errno) -> EntryReply {
        throw .EPERM  // the store is flat
    }

    public func mknod(parent: InodeNumber, name: String, mode: mode_t, device: dev_t, request: RequestContext) throws(Errno) -> EntryReply {
        throw .EPERM
    }

    public func symlink(target: String, parent: InodeNumber, name: String, request: RequestContext) throws(Errno) -> EntryReply {
        throw .EPERM
    }

    public func link(_ inode: InodeNumber, newParent: InodeNumber, newName: String, request: RequestContext) throws(Errno) -> EntryReply {
        throw .EPERM  // a key has one name
    }

    public func rmdir(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) {
        throw name == FileName.controlFolder ? .EPERM : .ENOTDIR
    }
}
