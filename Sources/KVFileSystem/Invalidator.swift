import FUSEKit
import KVStore
import Synchronization

/// Tells the kernel to drop what it cached about files that changed behind
/// its back: another device's writes, and commits whose stored bytes differ
/// from the bytes written.
///
/// Callers must hold no lock a FUSE request may need: the kernel may call
/// back into the filesystem before the notification returns.
public final class Invalidator: Sendable {
    private let session = Mutex<FUSESession?>(nil)

    /// An invalidator with no session yet: it does nothing until ``attach(_:)``.
    public init() {}

    /// Starts sending notifications through `session`.
    public func attach(_ session: FUSESession) {
        self.session.withLock { $0 = session }
    }

    private var current: FUSESession? { session.withLock { $0 } }

    /// Drops an inode's cached attributes and pages. Unknown inodes are fine.
    func invalidate(inode: InodeNumber) {
        _ = current?.notifyInvalidateInode(inode)
    }

    /// Drops the cached lookup of a name in the root, and the root's listing.
    func invalidate(name: String) {
        guard let session = current else { return }
        _ = session.notifyInvalidateEntry(parent: .root, name: name)
    }

    /// Drops the root folder's cached attributes and listing.
    func invalidateListing() {
        _ = current?.notifyInvalidateInode(.root)
    }
}

extension KeyFileSystem {
    /// Makes a change from another device visible at once: each key's inode
    /// (size, mtime, pages) and name (appeared, vanished), and the listing.
    func storeChanged(_ change: StoreChange) {
        guard change.reason != .quotaViolationChange || !change.keys.isEmpty else { return }
        keysChanged(change.keys)
    }

    /// Drops what the kernel cached of `keys` (inode, name) and of the listing.
    func keysChanged(_ keys: [String]) {
        let names = keys.map(FileName.encode)
        let inodes = lock.withLock { names.compactMap(nodes.inode(of:)) }
        for inode in inodes { invalidator.invalidate(inode: inode) }
        for name in names { invalidator.invalidate(name: name) }
        invalidator.invalidateListing()
    }
}
