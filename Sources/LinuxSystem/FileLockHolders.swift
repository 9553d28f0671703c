import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Who holds a lock on a file, as `/proc/locks` says: for a message that
/// names the process another one waits for (a program stopped in a debugger
/// in the middle of an append, say), which the lock file's own text cannot
/// be trusted to name.
public enum FileLockHolders {
    /// The processes holding a lock (`flock`, POSIX or OFD) on the file open
    /// as `descriptor`, as this process's pid namespace numbers them (0: a
    /// holder outside it); empty when none does or `/proc/locks` cannot be read.
    public static func of(_ descriptor: FileDescriptor) -> [pid_t] {
        locks(of: descriptor).filter { !$0.waiting }.map(\.pid)
    }

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

    /// The holders of the lock on `descriptor` as a phrase: `pid 4242 (kvfs-store-probe)`, joined by "and";
    /// nil when none is found.
    public static func describe(_ descriptor: FileDescriptor) -> String? {
        let holders = of(descriptor)
        guard !holders.isEmpty else { return nil }
        return holders.map { pid in
            pid == 0 ? "a process of another pid namespace"
                : "pid \(pid)" + ((try? ProcessFolder(pid: pid).name()).map { " (\($0))" } ?? "")
        }.joined(separator: " and ")
    }
}
