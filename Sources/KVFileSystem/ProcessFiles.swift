import Foundation
import LinuxSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Which files a process has open, as `/proc` tells: how a `flush` learns
/// whether the close it reports is the file's last one in that process.
///
/// FUSE sends `FLUSH` for every `close(2)`, also of one of several
/// descriptors sharing an open file. A shell's `> k` opens the key, moves the
/// descriptor to standard output with `dup2` and closes the original — a
/// `FLUSH` before the command has written a byte. Committing that bare
/// truncation would lose the old value when the command's write is then
/// refused (the README, File semantics: a refused write leaves the old
/// value); not committing a bare truncation at all would let `: > k` wait
/// for `RELEASE`, which the kernel sends after `close()` has returned
/// (every close commits). So a bare truncation is committed at the close
/// after which the closing process holds the file open for writing nowhere else.
///
/// Nothing here touches the mount (only `/proc`), so it never sends FUSE a
/// request and can run inside one. A process this one may not inspect, or
/// one outside its pid namespace (pid 0), counts as holding nothing: the
/// close then commits, as "every close commits" asks.
final class ProcessFiles: Sendable {
    /// The mount's device, as mountinfo shows it.
    let device: DeviceNumber
    /// Whether each mount id seen in a descriptor is a mount of this
    /// filesystem. Mount ids are unique across namespaces, so a process's
    /// mount table is read once per id, not once per close.
    private let mounts = Mutex<[Int: Bool]>([:])

    /// Finds the device of the kvfs mount at `mountPoint` in this process's
    /// mount table. Only the folder holding the mount point is resolved: a
    /// look at the mount point itself would be a request to this filesystem,
    /// which is not served yet.
    init?(mountPoint: String) {
        let name = (mountPoint as NSString).lastPathComponent
        guard let folder = realpath((mountPoint as NSString).deletingLastPathComponent, nil) else { return nil }
        defer { free(folder) }
        let path = String(cString: folder) == "/" ? "/" + name : String(cString: folder) + "/" + name
        let table = (try? ProcessFolder.current.mounts()) ?? []
        guard let mount = table.first(where: { $0.mountPoint == path && $0.type == "fuse.kvfs" }) else { return nil }
        device = mount.device
    }

    /// Whether process `pid` has `inode` of this mount open for writing at some descriptor.
    ///
    /// Standard output and error are looked at first: a shell's `> k` moves
    /// the file there before its bare close, so that close, the commonest one
    /// that must wait, is answered after reading one descriptor, not all.
    func holdsOpenForWriting(_ inode: UInt64, pid: pid_t) -> Bool {
        guard pid > 0 else { return false }
        let process = ProcessFolder(pid: pid)
        let first: [Int32] = [1, 2]
        if first.contains(where: { holdsOpenForWriting(inode, process: process, descriptor: $0) }) { return true }
        guard let descriptors = try? process.descriptors() else { return false }
        return descriptors.contains { !first.contains($0) && holdsOpenForWriting(inode, process: process, descriptor: $0) }
    }

    /// Whether `descriptor` of `process` is `inode` of this mount, open for writing.
    private func holdsOpenForWriting(_ inode: UInt64, process: ProcessFolder, descriptor: Int32) -> Bool {
        guard let info = try? process.descriptorInfo(descriptor), info.inode == inode, info.isWritable else { return false }
        // An inode number alone may be another filesystem's (a terminal's, say): check the mount.
        return isThisFileSystem(info.mountID, seenBy: process)
    }

    /// Whether mount `id` (of `process`'s mount table) is a mount of this filesystem.
    private func isThisFileSystem(_ id: Int, seenBy process: ProcessFolder) -> Bool {
        if let known = mounts.withLock({ $0[id] }) { return known }
        guard let mount = ((try? process.mounts()) ?? []).first(where: { $0.id == id }) else { return false }
        let ours = mount.device == device
        mounts.withLock { $0[id] = ours }
        return ours
    }
}
