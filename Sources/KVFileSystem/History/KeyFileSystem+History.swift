import FUSEKit
import KVStore

/// `.kvfs/history/` (README § History): a read-only folder per key with a
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
    /// How long a key's listing is reused while nothing in the store changed:
    /// the retention's age limit moves with the clock.
    static let historyListingLifetime: Duration = .seconds(1)

    /// A key's versions as listed, with where each name is: `ls -l` of 10,000
    /// versions looks each one up, and one listing serves all of them.
    struct HistoryListing {
        let revision: HistoryRevision
        let made: ContinuousClock.Instant
        let versions: [KeyVersion]
        let indexByName: [String: Int]

        func version(named name: String) -> KeyVersion? { indexByName[name].map { versions[$0] } }
    }

    /// The most keys' listings kept at once.
    private static let listingsKept = 8

    /// `key`'s versions, from the kept listing while it holds. Called with the lock held.
    func historyListing(of key: String) -> HistoryListing {
        let revision = store.historyRevision
        let now = ContinuousClock.now
        if let kept = historyListings[key], kept.revision == revision, now - kept.made < Self.historyListingLifetime { return kept }
        let versions = store.history(forKey: key)
        let listing = HistoryListing(revision: revision, made: now, versions: versions,
                                     indexByName: Dictionary(versions.indices.map { (versions[$0].name, $0) }, uniquingKeysWith: { first, _ in first }))
        if historyListings.count >= Self.listingsKept { historyListings.removeAll() }
        historyListings[key] = listing
        return listing
    }

    /// `lookup` in `.kvfs/history/` or one of its folders.
    func lookupHistory(parent: InodeNumber, name: String) throws(Errno) -> EntryReply {
        try locked { () throws(Errno) in
            if parent == HistoryNodes.folder {
                guard let key = FileName.decode(name), !historyListing(of: key).versions.isEmpty else { return .negative(timeout: 0) }
                return historyEntry(historyFolderAttributes(historyNodes.lookUp(.key(key))))
            }
            guard case let .key(key) = historyNodes.node(of: parent) else { throw .ENOTDIR }
            guard let version = historyListing(of: key).version(named: name) else { return .negative(timeout: 0) }
            return historyEntry(versionAttributes(historyNodes.lookUp(.version(key: key, name: name)), version))
        }
    }

    private func historyEntry(_ attributes: FileAttributes) -> EntryReply {
        EntryReply(attributes, attributeTimeout: Self.historyTimeout, entryTimeout: Self.historyTimeout)
    }

    /// The attributes of a history inode (``HistoryNodes/contains(_:)``).
    func historyAttributes(_ inode: InodeNumber) throws(Errno) -> AttributeReply {
        try locked { () throws(Errno) in
            guard inode != HistoryNodes.folder else { return AttributeReply(historyFolderAttributes(inode), timeout: Self.historyTimeout) }
            let attributes: FileAttributes
            switch historyNodes.node(of: inode) {
            case .key: attributes = historyFolderAttributes(inode)
            case let .version(key, name):
                guard let version = historyListing(of: key).version(named: name) else { throw .ENOENT }
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
        try locked { () throws(Errno) in
            if inode == HistoryNodes.folder {
                let keys = store.historyKeys
                return [DirectoryEntry(name: ".", inode: inode, type: .directory),
                        DirectoryEntry(name: "..", inode: NodeTable.controlFolder, type: .directory)]
                    + keys.map { DirectoryEntry(name: FileName.encode($0), inode: historyNodes.number(.key($0)), type: .directory) }
            }
            guard case let .key(key) = historyNodes.node(of: inode) else { throw .ENOTDIR }
            let versions = historyListing(of: key).versions
            return [DirectoryEntry(name: ".", inode: inode, type: .directory),
                    DirectoryEntry(name: "..", inode: HistoryNodes.folder, type: .directory)]
                + versions.map { DirectoryEntry(name: $0.name, inode: historyNodes.number(.version(key: key, name: $0.name)), type: .regular) }
        }
    }

    /// Opens a version's file for reading: its value read from the journal now.
    func openVersion(_ inode: InodeNumber, flags: OpenFlags) throws(Errno) -> OpenReply {
        if flags.isWritable { throw .EACCES }
        let version: KeyVersion = try locked { () throws(Errno) in
            guard case let .version(key, name) = historyNodes.node(of: inode) else { throw .EISDIR }
            guard let version = historyListing(of: key).version(named: name) else { throw .ENOENT }
            return version
        }
        let content: [UInt8]
        do { content = try store.content(of: version) } catch { throw Errno(error) }
        let file = OpenFile(inode: inode, flags: flags, content: content)
        return OpenReply(handle: lock.withLock { register(file) }, options: [.directIO, .noFlush])
    }
}
