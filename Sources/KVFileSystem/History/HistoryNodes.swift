import FUSEKit
import KVStore

/// Inode numbers for `.kvfs/history/`: the folder itself, a folder per key
/// and a file per version. They are numbered from ``firstNumbered`` up, apart
/// from the keys' files, and kept while the kernel holds lookups on them, as
/// ``NodeTable`` keeps the keys' (a version never changes, so its inode is
/// its for as long as the kernel knows it).
struct HistoryNodes {
    /// `.kvfs/history/`.
    static let folder: InodeNumber = 5
    /// The first number given to a key's folder or a version's file: far above any key file's.
    private static let firstNumbered: UInt64 = 1 << 56

    /// What a history inode stands for.
    enum Node: Hashable {
        /// `.kvfs/history/KEYFILE/`.
        case key(StoreKey)
        /// `.kvfs/history/KEYFILE/NAME`.
        case version(key: StoreKey, name: String)
    }

    private var inodeByNode: [Node: InodeNumber] = [:]
    private var nodeByInode: [InodeNumber: Node] = [:]
    private var lookups = LookupCounts()
    private var next = firstNumbered

    /// Whether `inode` is one of `.kvfs/history/`'s folders or files (the folder itself included).
    static func contains(_ inode: InodeNumber) -> Bool { inode == folder || inode.rawValue >= firstNumbered }

    /// What an inode stands for, while the kernel may know it.
    func node(of inode: InodeNumber) -> Node? { nodeByInode[inode] }

    /// The inode for a node, assigned if it has none, as a listing shows it (no lookup counted).
    mutating func number(_ node: Node) -> InodeNumber {
        if let inode = inodeByNode[node] { return inode }
        let inode = InodeNumber(rawValue: next)
        next += 1
        inodeByNode[node] = inode
        nodeByInode[inode] = node
        return inode
    }

    /// The inode for a node, given out to the kernel (one more lookup).
    mutating func lookUp(_ node: Node) -> InodeNumber {
        let inode = number(node)
        lookups.add(inode)
        return inode
    }

    /// The kernel dropped `count` lookups; an inode nobody holds is freed.
    mutating func forget(_ inode: InodeNumber, count: UInt64) {
        guard lookups.forget(inode, count: count) else { return }
        if let node = nodeByInode.removeValue(forKey: inode) { inodeByNode[node] = nil }
    }

    /// Frees the inodes among `inodes` (a listing's, once it is closed) that
    /// the kernel never looked up: listing a folder again and again holds no
    /// more of them than one listing does.
    mutating func forgetUnlooked(_ inodes: some Sequence<InodeNumber>) {
        for inode in inodes where !lookups.isHeld(inode) {
            if let node = nodeByInode.removeValue(forKey: inode) { inodeByNode[node] = nil }
        }
    }
}
