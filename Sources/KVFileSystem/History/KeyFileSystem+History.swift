import FUSEKit
import KVStore

/// `.kvfs/history/` (docs/history.md): a read-only folder per key with a
/// version within the store's retention (removed keys included), named as
/// the key's file is, holding one read-only file per version, named as
/// ``VersionName`` names it, whose content is the version's value in its
/// file form (empty for a removal) and whose mtime is its write time.
/// Restoring is an ordinary copy onto the key's file.
///
/// Nothing here is invalidated in the kernel: entries and attributes are
/// cached for ``historyTimeout`` only, and listings are made at each open.
extension KeyFileSystem {
    /// The history folder's name in `.kvfs/`.
    static let historyFolderName = "history"
    /// How long the kernel may keep history's entries and attributes: a new
    /// version shows within it (a version's file never changes; it may only go).
    static let historyTimeout = 1.0

    /// `lookup` in `.kvfs/history/` or one of its folders.
    func lookupHistory(parent: InodeNumber, name: String) throws(Errno) -> EntryReply {
        try history.withLock { history throws(Errno) in
            if parent == HistoryNodes.folder {
                guard let key = FileName.decode(name), !history.listing(of: key).versions.isEmpty else { return .negative(timeout: 0) }
                return historyEntry(historyFolderAttributes(history.nodes.lookUp(.key(key))))
            }
            guard case let .key(key) = history.nodes.node(of: parent) else { throw .ENOTDIR }
            guard let version = history.listing(of: key).version(named: name) else { return .negative(timeout: 0) }
            return historyEntry(versionAttributes(history.nodes.lookUp(.version(key: key, name: name)), version))
        }
    }

    private func historyEntry(_ attributes: FileAttributes) -> EntryReply {
        EntryReply(attributes, attributeTimeout: Self.historyTimeout, entryTimeout: Self.historyTimeout)
    }

    /// The attributes of a history inode (``HistoryNodes/contains(_:)``).
    func historyAttributes(_ inode: InodeNumber) throws(Errno) -> AttributeReply {
        try history.withLock { history throws(Errno) in
            guard inode != HistoryNodes.folder else { return AttributeReply(historyFolderAttributes(inode), timeout: Self.historyTimeout) }
            let attributes: FileAttributes
            switch history.nodes.node(of: inode) {
            case .key: attributes = historyFolderAttributes(inode)
            case let .version(key, name):
                guard let version = history.listing(of: key).version(named: name) else { throw .ENOENT }
                attributes = versionAttributes(inode, version)
            case nil: throw .ENOENT
            }
            return AttributeReply(attributes, timeout: Self.historyTimeout)
        }
    }

    /// A read-only folder.
    private func historyFolderAttributes(_ inode: InodeNumber) -> FileAttributes {
        var attributes = folderAttributes(inode)
        attributes.permissions = 0o555
        return attributes
    }

    /// A version's file: read-only, its size the value's file size, its times the write time.
    private func versionAttributes(_ inode: InodeNumber, _ version: KeyVersion) -> FileAttributes {
        fileAttributes(inode, size: version.size, modified: Self.timestamp(version.stamp), writable: false)
    }

    /// The entries of a history folder, listed now.
    func historyEntries(_ inode: InodeNumber) throws(Errno) -> [DirectoryEntry] {
        try history.withLock { history throws(Errno) in
            if inode == HistoryNodes.folder {
                let keys = store.historyKeys
                return [DirectoryEntry(name: ".", inode: inode, type: .directory),
                        DirectoryEntry(name: "..", inode: NodeTable.controlFolder, type: .directory)]
                    + keys.map { DirectoryEntry(name: FileName.encode($0), inode: history.nodes.number(.key($0)), type: .directory) }
            }
            guard case let .key(key) = history.nodes.node(of: inode) else { throw .ENOTDIR }
            let versions = history.listing(of: key).versions
            return [DirectoryEntry(name: ".", inode: inode, type: .directory),
                    DirectoryEntry(name: "..", inode: HistoryNodes.folder, type: .directory)]
                + versions.map { DirectoryEntry(name: $0.name, inode: history.nodes.number(.version(key: key, name: $0.name)), type: .regular) }
        }
    }

    /// Opens a version's file for reading: its value read from the journal now.
    func openVersion(_ inode: InodeNumber, flags: OpenFlags) throws(Errno) -> OpenReply {
        if flags.isWritable { throw .EACCES }
        let version: KeyVersion = try history.withLock { history throws(Errno) in
            guard case let .version(key, name) = history.nodes.node(of: inode) else { throw .EISDIR }
            guard let version = history.listing(of: key).version(named: name) else { throw .ENOENT }
            return version
        }
        let content: [UInt8]
        do { content = try store.content(of: version) } catch { throw Errno(error) }
        let handle = tables.withLock { $0.register(OpenFile(inode: inode, flags: flags, content: content)) }
        return OpenReply(handle: handle, options: [.directIO, .noFlush])
    }
}
