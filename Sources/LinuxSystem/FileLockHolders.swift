import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Who waits for a lock on a file, as `/proc/locks` says (its holders:
/// `FileDescriptor.flockHolders()`): a mount that keeps the device's journal
/// lets go of it for a process that waits without asking.
public enum FileLockHolders {
    /// Whether a process waits for a lock on the file open as `descriptor` (it asked for one that conflicts with a held one).
    public static func waiting(for descriptor: FileDescriptor) -> Bool {
        locks(of: descriptor).contains { $0.waiting }
    }

    /// The locks `/proc/locks` lists on the file open as `descriptor`: who
    /// holds each, or waits for it (the kernel lists a waiter after `->`).
    private static func locks(of descriptor: FileDescriptor) -> [(pid: pid_t, waiting: Bool)] {
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0,
              let bytes = try? FileDescriptor.contents(of: "/proc/locks") else { return [] }
        // "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF": the device as hex major:minor, the inode in decimal.
        let device = UInt64(status.st_dev)
        let file = (major: ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff), minor: (device & 0xff) | ((device >> 12) & ~0xff),
                    inode: UInt64(status.st_ino))
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard let index = fields.firstIndex(where: { field in
                let parts = field.split(separator: ":")
                return parts.count == 3 && UInt64(parts[0], radix: 16) == file.major && UInt64(parts[1], radix: 16) == file.minor
                    && UInt64(parts[2]) == file.inode
            }), index > 0 else { return nil }
            return (pid_t(fields[index - 1]) ?? 0, fields.contains("->"))
        }
    }
}
