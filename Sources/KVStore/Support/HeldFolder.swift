import Foundation
import Synchronization
import SystemPackage

/// A folder a user named by its path — the sync directory — opened once and
/// held by its descriptor while the store is open: every file below it is
/// opened from that descriptor (``Folder``), so renaming the folder (or one
/// of its parents) and putting another in its place under a running store
/// does not carry the store's writes into the other one.
///
/// The path is looked at again for two things only:
/// - to notice that it no longer names the folder held (``relocation()``).
///   The store keeps writing into the folder it opened: what it acknowledged
///   and what it writes next stay together in the store it was started on,
///   none of it goes to a folder it was not started on (anyone who may
///   rename a folder in its parent could otherwise send a device's writes
///   into a folder of their choosing), and the folder held is where a
///   synchronizer that follows the rename carries them. The status and the
///   log say where that folder is now, and how to use the one at the path.
/// - when the folder held was deleted (`rm -rf`: its link count is 0),
///   nothing can be made in it any more: the folder at the path is taken up
///   instead, made anew when missing (with `create`), so that the store
///   writes its folder there again. Deleting a private folder's contents
///   takes its owner, so no one else can redirect the writes this way.
final class HeldFolder: Sendable {
    /// The path the user named.
    let path: String
    /// False for a store opened read-only: the folder is then neither made nor written.
    let isWritable: Bool
    private let held = Mutex<Folder?>(nil)

    init(path: String, isWritable: Bool) {
        self.path = path
        self.isWritable = isWritable
    }

    /// The folder held, opened at the path on first use (and again once the
    /// one held was deleted); nil when none is there and not `create`.
    func folder(create: Bool = false) throws(KVStoreError) -> Folder? {
        try held.withLock { (held) throws(KVStoreError) -> Folder? in
            if let folder = held, !folder.isDeleted { return folder }
            guard let opened = try Folder.open(path, create: create, writable: isWritable) else { return nil }
            held = opened
            return opened
        }
    }

    /// A path that names the folder held wherever it is moved (``Folder/descriptorPath``),
    /// or the path the user named before it is opened.
    var stablePath: String { held.withLock { $0?.descriptorPath } ?? path }

    /// What became of the folder held, when its path no longer names it:
    /// it was moved (or a parent was), with or without another folder put in
    /// its place. Nil while the path names it, before it is opened, and once
    /// it was deleted (the next use takes up the folder at the path).
    func relocation() -> Relocation? {
        guard let folder = held.withLock({ $0 }), let own = folder.status, own.linkCount > 0 else { return nil }
        let named = try? Stat(FilePath(path))  // the user's path: links along it are followed
        if let named, named.deviceID == own.deviceID && named.inode == own.inode { return nil }
        return Relocation(path: path, now: folder.currentPath, replaced: named != nil)
    }

    /// A folder held that its path no longer names.
    struct Relocation: Equatable, Sendable {
        /// The path it was opened by.
        let path: String
        /// Where it is now, if the kernel can say.
        let now: String?
        /// Whether something else is at the path now.
        let replaced: Bool

        /// What the log and the status say of it.
        var warning: SyncWarning {
            let now = self.now.map { "now at \($0)" } ?? "moved where this process cannot see it"
            let there = replaced ? "another folder was put in its place" : "nothing is at \(path) now"
            return SyncWarning(kind: .syncDirectoryMoved, device: nil, file: path, message: """
                the sync directory \(path) was moved (\(now)) and \(there): this device keeps reading and writing \
                the folder it opened, so that none of its writes goes to a folder it was not started on
                """, fix: """
                to use the folder now at \(path), unmount and mount again (`kvfs unmount MOUNTPOINT`, then \
                `kvfs mount` as before); to go on with this one, move it back to \(path)
                """)
        }
    }
}
