import FUSEKit
import KVStore

extension KeyFileSystem {
    /// Lists a folder once, at open, so a listing in progress is a consistent snapshot.
    public func opendir(_ inode: InodeNumber, flags: OpenFlags, request: Request) throws(Errno) -> OpenReply {
        let entries: [DirectoryEntry]
        switch inode {
        case .root: entries = rootEntries()
        case NodeTable.controlFolder:
            entries = [DirectoryEntry(name: ".", inode: inode, type: .directory), DirectoryEntry(name: "..", inode: .root, type: .directory)]
                + [ControlFile.status, .changeLog].map { DirectoryEntry(name: $0.name, inode: $0.inode, type: .regular) }
        default: throw .ENOTDIR
        }
        return lock.withLock {
            let handle = newHandle()
            directories[handle] = entries
            return OpenReply(handle: handle)
        }
    }

    private func rootEntries() -> [DirectoryEntry] {
        let keys = store.entries.keys
        return lock.withLock {
            var names = Set(keys.map(FileName.encode)).union(scratch.keys)
            for file in files.values where file.writable {  // created, not yet closed
                if let name = nodes.name(of: file.inode) { names.insert(name) }
            }
            return [DirectoryEntry(name: ".", inode: .root, type: .directory),
                    DirectoryEntry(name: "..", inode: .root, type: .directory),
                    DirectoryEntry(name: FileName.controlFolder, inode: NodeTable.controlFolder, type: .directory)]
                + names.map { DirectoryEntry(name: $0, inode: nodes.number($0), type: .regular) }  // `ls` sorts
        }
    }

    public func readdir(_ inode: InodeNumber, handle: UInt64, request: Request) throws(Errno) -> [DirectoryEntry] {
        guard let entries = lock.withLock({ directories[handle] }) else { throw .EBADF }
        return entries
    }

    /// Drops the listing. Its signature must be FUSEKit's exactly (no `request:`).
    public func releasedir(_ inode: InodeNumber, handle: UInt64) {
        _ = lock.withLock { directories.removeValue(forKey: handle) }
    }
}
