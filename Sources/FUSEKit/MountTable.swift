import Glibc
import LinuxSystem

/// This mount namespace's mounts, as `/proc/self/mountinfo` lists them.
enum MountTable {
    /// `path` with symbolic links resolved, as the table names mount points.
    /// Only for a path not yet mounted: resolving a FUSE mount point asks
    /// its filesystem.
    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The FUSE connection number of the FUSE mount at `canonical` (its
    /// device number, as `/sys/fs/fuse/connections` names it), or nil when
    /// no FUSE filesystem is mounted there in this namespace (or the table
    /// cannot be read). Reads the table rather than `stat(2)`, which would
    /// ask the filesystem itself.
    static func fuseConnection(at canonical: String) -> UInt64? {
        let mounts = (try? ProcessFolder.current.mounts()) ?? []
        // The last one: the mount on top.
        return mounts.last { $0.mountPoint == canonical && $0.isFUSE }?.device.kernelEncoding
    }
}
