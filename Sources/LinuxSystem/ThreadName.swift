import SystemPackage

/// The calling thread's name as the kernel knows it (its `comm`): what
/// `ps -L`, `top -H`, perf and `/proc/PID/task/TID/comm` show.
///
/// Foundation's `Thread.name` stays inside Foundation on Linux, and
/// `pthread_setname_np` is not in Swift's Glibc module (it needs
/// `_GNU_SOURCE`), so the name is written where the kernel keeps it,
/// `/proc/thread-self/comm` (proc(5)).
public enum ThreadName {
    /// The longest name the kernel keeps, in bytes; a longer one is cut.
    public static let maximumLength = 15

    /// Names the calling thread. Naming is for people reading `ps`: a
    /// failure (no `/proc`) changes nothing and is not an error.
    public static func set(_ name: String) {
        guard let file = try? FileDescriptor.open("/proc/thread-self/comm", .writeOnly, options: .closeOnExec) else { return }
        defer { try? file.close() }
        _ = try? file.writeAll(name.utf8.prefix(maximumLength))
    }

    /// The calling thread's name.
    public static func current() throws(SystemCallError) -> String {
        let bytes = try FileDescriptor.contents(of: "/proc/thread-self/comm")
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }
}
