import FUSEKit
import KVStore

extension KeyFileSystem {
    /// Lists a folder once, at open, so a listing in progress is a consistent snapshot.
    public func opendir(_ inode: InodeNumber, flags: OpenFlags, request: RequestContext) throws(Errno) -> OpenReply {
        let entries: [DirectoryEntry]
        switch inode {
        case .root: entries = rootEntries()
        case NodeTable.controlFolder:
            entries = [DirectoryEntry(name: ".", inode: inode, type: .directory), DirectoryEntry(name: "..", inode: .root, type: .directory)]
                + [ControlFile.status, .changeLog].map { DirectoryEntry(name: $0.name, inode: $0.inode, type: .regular) }
                + [DirectoryEntry(name: Self.historyFolderName, inode: HistoryNodes.folder, type: .directory)]
        case _ where HistoryNodes.contains(inode): entries = try historyEntries(inode)
        default: throw .ENOTDIR
        }
        return tables.withLock { tables in
            let handle = tables.newHandle()
            tables.directories[handle] = entries
            return OpenReply(handle: handle)
        }
    }

    /// The keys' names, then the names that are no key: scratch files, and
    /// keys created but not committed yet. Names are unique without a set
    /// over all of them (hashing every name again cost a listing a fifth of its time).
    private func rootEntries() -> [DirectoryEntry] {
        let keys = store.entries
        return tables.withLock { tables in
            var entries = [DirectoryEntry(name: ".", inode: .root, type: .directory),
                           DirectoryEntry(name: "..", inode: .root, type: .directory),
                           DirectoryEntry(name: FileName.controlFolder, inode: NodeTable.controlFolder, type: .directory)]
            entries.reserveCapacity(entries.count + keys.count + tables.scratch.count)
            func add(_ name: String) { entries.append(DirectoryEntry(name: name, inode: tables.nodes.number(name), type: .regular)) }
            for key in keys.keys { add(FileName.encode(key)) }  // `ls` sorts
            let isKey = { (name: String) in FileName.decode(name).map { keys[$0] != nil } ?? false }
            var others = Set(tables.scratch.names.filter { !isKey($0.string) })
            for file in tables.files.values where file.writable {  // created, not yet closed
                if let name = tables.nodes.name(of: file.inode), !isKey(name) { others.insert(StoreKey(name)) }
            }
            for name in others { add(name.string) }
            return entries
        }
    }

    public func readdir(_ inode: InodeNumber, handle: UInt64, request: RequestContext) throws(Errno) -> [DirectoryEntry] {
        guard let entries = tables.withLock({ $0.directories[handle] }) else { throw .EBADF }
        return entries
    }

    /// Drops the listing. Its signature must be FUSEKit's exactly (no `request:`).
    public func releasedir(_ inode: InodeNumber, handle: UInt64) {
        let entries = tables.withLock { $0.directories.removeValue(forKey: handle) }
        if HistoryNodes.contains(inode), let entries { history.withLock { $0.nodes.forgetUnlooked(entries.map(\.inode)) } }
    }
}
