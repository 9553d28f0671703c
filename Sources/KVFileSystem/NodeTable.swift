import FUSEKit
import KVStore

/// Inode numbers for the names in the mount's root.
///
/// A name keeps its inode while the kernel holds lookups on it, so a file
/// stays the same file across writes from here and from other devices; a
/// rename moves the inode with the name. Fixed inodes below 16 are the root
/// and the control folder's entries. Names are held by their exact scalars
/// (``StoreKey``), as keys are: two names that differ only in normalization
/// are two files.
struct NodeTable {
    static let controlFolder: InodeNumber = 2
    static let status: InodeNumber = 3
    static let changeLog: InodeNumber = 4
    private static let firstNamed: UInt64 = 16

    private var inodeByName: [StoreKey: InodeNumber] = [:]
    private var nameByInode: [InodeNumber: String] = [:]
    private var lookups = LookupCounts()
    private var next = firstNamed

    /// The inode a name has, if the kernel may know it.
    func inode(of name: String) -> InodeNumber? { inodeByName[StoreKey(name)] }

    /// The name an inode stands for now, or nil once unnamed.
    func name(of inode: InodeNumber) -> String? { nameByInode[inode] }

    /// The inode for a name, given out to the kernel (one more lookup).
    mutating func lookUp(_ name: String) -> InodeNumber {
        let inode = number(name)
        lookups.add(inode)
        return inode
    }

    /// The inode for a name, assigned if it has none, as a listing shows it (no lookup counted).
    mutating func number(_ name: String) -> InodeNumber {
        if let inode = inodeByName[StoreKey(name)] { return inode }
        let inode = InodeNumber(next)
        next += 1
        inodeByName[StoreKey(name)] = inode
        nameByInode[inode] = name
        return inode
    }

    /// The kernel dropped `count` lookups; an inode nobody holds is freed.
    mutating func forget(_ inode: InodeNumber, count: UInt64) {
        guard lookups.forget(inode, count: count) else { return }
        if let name = nameByInode.removeValue(forKey: inode), inodeByName[StoreKey(name)] == inode {
            inodeByName[StoreKey(name)] = nil
        }
    }

    /// The name is gone: a later file of that name is a new file.
    mutating func unname(_ name: String) {
        if let inode = inodeByName.removeValue(forKey: StoreKey(name)) { nameByInode[inode] = nil }
    }

    /// The inode of `from` now has the name `to`; `to`'s old inode loses its name.
    mutating func rename(_ from: String, to: String) {
        unname(to)
        guard let inode = inodeByName.removeValue(forKey: StoreKey(from)) else { return }
        inodeByName[StoreKey(to)] = inode
        nameByInode[inode] = to
    }
}
