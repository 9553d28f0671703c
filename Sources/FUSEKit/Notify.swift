import CFUSE
import Glibc

/// Telling the kernel that data it may have cached changed behind its back
/// (for example a value that arrived from another device).
///
/// Each call returns `nil` on success or the error: `ENOENT` when the kernel
/// does not have that inode or name cached (nothing to do: ignore it),
/// `ENOTCONN` when the session is not mounted or has not received the
/// kernel's `INIT` yet.
///
/// They may be called from any thread, but never from inside a
/// ``FileSystemOperations`` method, and never while holding a lock that
/// such a method may take: the kernel can wait, inside the notification, for
/// requests (e.g. a pending read of a page it wants to drop) that need that
/// method to finish, and the two would wait for each other forever.
/// Update your data first, release your locks, then notify.
extension FUSESession {
    /// Drops what the kernel cached about `inode`
    /// (`fuse_lowlevel_notify_inval_inode`): its attributes, and its cached
    /// pages from `offset` for `length` bytes (`length` 0: to the end). A
    /// negative `offset` drops the attributes only. For a directory this
    /// drops its cached listing.
    @discardableResult
    public func notifyInvalidateInode(_ inode: InodeNumber, offset: Int64 = 0, length: Int64 = 0) -> Errno? {
        withConnectedSession { fuse_lowlevel_notify_inval_inode($0, inode.rawValue, off_t(offset), off_t(length)) }
    }

    /// Drops the kernel's cached lookup of `name` in `parent`, positive or
    /// negative (`fuse_lowlevel_notify_inval_entry`): the next access looks
    /// it up again. Use it when a name appears, disappears or now means another inode.
    @discardableResult
    public func notifyInvalidateEntry(parent: InodeNumber, name: String) -> Errno? {
        var name = name
        return name.withUTF8 { bytes in
            withConnectedSession { session in
                bytes.withMemoryRebound(to: CChar.self) {
                    fuse_lowlevel_notify_inval_entry(session, parent.rawValue, $0.baseAddress, $0.count)
                }
            }
        }
    }

    /// Tells the kernel that `name` in `parent`, which referred to `child`,
    /// was deleted (`fuse_lowlevel_notify_delete`): like
    /// ``notifyInvalidateEntry(parent:name:)``, and also drops the name from
    /// watches (inotify reports the deletion).
    @discardableResult
    public func notifyDelete(parent: InodeNumber, child: InodeNumber, name: String) -> Errno? {
        var name = name
        return name.withUTF8 { bytes in
            withConnectedSession { session in
                bytes.withMemoryRebound(to: CChar.self) {
                    fuse_lowlevel_notify_delete(session, parent.rawValue, child.rawValue, $0.baseAddress, $0.count)
                }
            }
        }
    }
}
