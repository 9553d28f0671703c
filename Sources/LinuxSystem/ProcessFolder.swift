import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A process's folder in `/proc`: the one reader of what Linux tells about a
/// process (its mount table, open descriptors, state, name, command line).
///
/// Every read names the file and the call in its error. Reading another
/// user's process needs the rights `ptrace` would (`EACCES`); a process that
/// has exited reads as `ENOENT` (or `ESRCH`).
public struct ProcessFolder: Hashable, Sendable {
    /// The folder, e.g. `/proc/42` or `/proc/self`.
    public let path: String

    /// The folder of process `pid` (as this process's pid namespace numbers it).
    public init(pid: pid_t) { path = "/proc/\(pid)" }

    /// This process's folder (`/proc/self`).
    public static let current = ProcessFolder(path: "/proc/self")

    private init(path: String) { self.path = path }

    /// The mounts this process's mount namespace has (`mountinfo`), in the
    /// kernel's order: a mount listed later is on top of an earlier one at
    /// the same point. Lines that do not parse are left out.
    public func mounts() throws(SystemCallError) -> [MountInfo] {
        let text = String(decoding: try FileDescriptor.contents(of: path + "/mountinfo"), as: UTF8.self)
        return text.split(separator: "\n").compactMap { MountInfo(line: $0) }
    }

    /// The numbers of the descriptors the process has open (`fdinfo`'s names).
    public func descriptors() throws(SystemCallError) -> [Int32] {
        let folder = path + "/fdinfo"
        guard let listing = opendir(folder) else { throw SystemCallError("opendir", folder, errno: Errno(rawValue: errno)) }
        defer { closedir(listing) }
        var numbers: [Int32] = []
        while let entry = readdir(listing) {
            let number = withUnsafeBytes(of: entry.pointee.d_name) { name in
                Int32(String(decoding: name.prefix { $0 != 0 }, as: UTF8.self))
            }
            if let number { numbers.append(number) }
        }
        return numbers
    }

    /// What the kernel tells of the process's descriptor `descriptor` (`fdinfo/N`).
    public func descriptorInfo(_ descriptor: Int32) throws(SystemCallError) -> DescriptorInfo {
        try DescriptorInfo(path: path + "/fdinfo/\(descriptor)")
    }

    /// The process's state letter from `stat` (`R`, `S`, `D`, `Z`, …).
    public func state() throws(SystemCallError) -> Character {
        let text = String(decoding: try FileDescriptor.contents(of: path + "/stat"), as: UTF8.self)
        // PID (COMM) STATE …, and COMM may hold spaces and parentheses: the state follows the last ")".
        guard let close = text.lastIndex(of: ")"),
              let state = text[text.index(after: close)...].first(where: { $0 != " " }) else {
            throw SystemCallError("read", path + "/stat", errno: .ioError)
        }
        return state
    }

    /// Whether the process is a zombie: exited, not yet waited for.
    public func isZombie() throws(SystemCallError) -> Bool { try state() == "Z" }

    /// Whether the process has exited as a whole: gone, or a zombie all of
    /// whose threads have ended, so that its descriptors are closed and its
    /// locks released. The leader thread turns zombie first, while the others
    /// are still being ended (tens of milliseconds, more for a thread waiting
    /// uninterruptibly), so `state()` alone says too early. A zombie stays
    /// listed (`ps`, `kill -0`) until its parent reaps it.
    public func hasExited() -> Bool {
        let text: String
        do {
            text = String(decoding: try FileDescriptor.contents(of: path + "/status"), as: UTF8.self)
        } catch {
            return error.errno == .noSuchFileOrDirectory || error.errno == .noSuchProcess
        }
        var zombie = false, threads = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("State:") { zombie = line.dropFirst(6).first { $0 != "\t" && $0 != " " } == "Z" }
            if line.hasPrefix("Threads:") { threads = Int(line.dropFirst(8).drop { $0 == "\t" || $0 == " " }) ?? 0 }
        }
        return zombie && threads <= 1
    }

    /// The process's name (`comm`: at most 15 bytes, without the newline).
    public func name() throws(SystemCallError) -> String {
        var text = String(decoding: try FileDescriptor.contents(of: path + "/comm"), as: UTF8.self)
        if text.last == "\n" { text.removeLast() }
        return text
    }

    /// Renames the process (its `comm`, which `ps`, `top` and `pgrep` show);
    /// only a process's own name, or one of its threads', can be changed.
    public func setName(_ name: String) throws(SystemCallError) {
        let file = try SystemCallError.naming("open", path + "/comm") {
            try FileDescriptor.open(path + "/comm", .writeOnly, options: .closeOnExec)
        }
        defer { try? file.close() }
        try file.write(all: name.utf8)
    }

    /// The process's arguments (`cmdline`), the program's name first.
    public func commandLine() throws(SystemCallError) -> [String] {
        try FileDescriptor.contents(of: path + "/cmdline").split(separator: 0, omittingEmptySubsequences: false)
            .dropLast().map { String(decoding: $0, as: UTF8.self) }
    }
}
