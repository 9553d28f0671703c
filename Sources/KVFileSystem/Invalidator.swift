import FUSEKit
import KVStore
import Synchronization

/// Tells the kernel to drop what it cached about files that changed behind
/// its back: another device's writes, keys the quota rule set aside or let
/// back, and commits whose stored bytes differ from the bytes written.
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
    /// Makes a change of what the store shows visible at once, whatever made
    /// it (another device, the quota rule, this mount's own writes moving
    /// other keys, a command run through the control socket): each key's
    /// inode (size, mtime, pages) and name (appeared, vanished, cached as
    /// missing), and the listing.
    func keysChanged(_ keys: some Collection<StoreKey>) {
        let names = keys.map(FileName.encode)
        let inodes = tables.withLock { tables in names.compactMap(tables.nodes.inode(of:)) }
        for inode in inodes { invalidator.invalidate(inode: inode) }
        for name in names { invalidator.invalidate(name: name) }
        invalidator.invalidateListing()
    }
}
