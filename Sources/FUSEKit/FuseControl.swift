import Glibc

/// The fusectl filesystem (`/sys/fs/fuse/connections`): a folder per FUSE
/// connection, named by the mount's device number, whose `abort` file ends
/// the connection (every request then fails, the daemon's read returns
/// `ENODEV`). Its files belong to the mounting user.
enum FuseControl {
    static let folder = "/sys/fs/fuse/connections"

    /// One connection's folder, pinned by its inode: a device number is
    /// reused by the next mount once a connection ends, its folder never.
    struct Connection: Sendable {
        let number: UInt64
        let inode: ino_t

        /// The folder of connection `number`, mounting fusectl first if root
        /// finds it missing; nil when it cannot be seen.
        init?(_ number: UInt64) {
            if access(FuseControl.folder + "/\(number)", F_OK) != 0 && geteuid() == 0 {
                _ = mount("fusectl", FuseControl.folder, "fusectl", 0, nil)
            }
            var info = stat()
            guard stat(FuseControl.folder + "/\(number)", &info) == 0 else { return nil }
            self.number = number
            inode = info.st_ino
        }

        /// Aborts the connection, if the folder is still this connection's.
        /// Through the C calls, not swift-system's `FileDescriptor`: it has
        /// no `openat`, which opens `abort` in the very folder whose inode was checked.
        func abort() {
            let directory = open(FuseControl.folder + "/\(number)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard directory >= 0 else { return }
            defer { close(directory) }
            var info = stat()
            guard fstat(directory, &info) == 0, info.st_ino == inode else { return }
            let file = openat(directory, "abort", O_WRONLY | O_CLOEXEC)
            guard file >= 0 else { return }
            _ = write(file, "1", 1)
            close(file)
        }
    }
}
