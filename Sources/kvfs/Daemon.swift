import Foundation
import KVFileSystem
#if canImport(Glibc)
import Glibc
#endif

/// Runs the mount as a daemon: this process starts itself again with
/// `--foreground` in a new session and waits until the child says the mount is
/// ready (or why it is not, as a JSON ``CommandError``), so `kvfs mount m &&
/// cat m/k` works.
enum Daemon {
    private static let readyVariable = "KVFS_READY_FD"

    /// Whether this process is a daemon started by ``start(arguments:mountPoint:)``.
    static var isChild: Bool { ProcessInfo.processInfo.environment[readyVariable] != nil }

    static func start(arguments: [String], mountPoint: String, log: String) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw CommandError.system("cannot create a pipe for", mountPoint) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        closeOnExec(except: [0, 1, 2, writeEnd])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The daemon's output goes to its log (it opens daemon.log as
        // standard error first thing): a crash never prints on the caller's terminal.
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A new session, with every signal unblocked and the stopping ones at
        // their defaults: a caller on a Dispatch thread (which blocks SIGTERM)
        // must not leave a daemon that SIGTERM cannot stop.
        // (POSIX_SPAWN_SETSID | SETSIGMASK | SETSIGDEF; Glibc's module does not export them.)
        posix_spawnattr_setflags(&attributes, Int16(0x80 | 0x08 | 0x04))
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var stopping = sigset_t()
        sigemptyset(&stopping)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&stopping, signal) }
        posix_spawnattr_setsigdefault(&attributes, &stopping)
        // The very binary running now (/proc/self/exe), named `kvfs` in argv
        // (and in ps, once the daemon renames itself: see ``nameProcess()``).
        let argv = ["kvfs"] + CommandLineRewrite.rewrite(arguments) + ["--foreground"]
        var environment = ProcessInfo.processInfo.environment
        environment[readyVariable] = String(writeEnd)
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let status = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envPointers in
                posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argvPointers, envPointers)
            }
        }
        close(writeEnd)
        guard status == 0 else { throw CommandError("cannot start the kvfs daemon: \(String(cString: strerror(status)))") }
        let message = readAll(readEnd)
        close(readEnd)
        if message == "ready" { return }
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
        if let failure = try? JSONDecoder().decode(CommandError.self, from: Data(message.utf8)) { throw failure }
        let signal = exitStatus & 0x7f
        throw CommandError(signal != 0 && signal != 0x7f
            ? "the kvfs daemon for \(mountPoint) crashed (signal \(signal)) before the mount was ready; see \(log)"
            : "the kvfs daemon for \(mountPoint) exited before the mount was ready; see \(log)")
    }

    /// Tells a waiting `kvfs mount` that the mount is ready (nil) or why it
    /// failed. Run in the foreground, prints the failure instead.
    static func reportReady(_ failure: CommandError?) {
        guard let value = ProcessInfo.processInfo.environment[readyVariable], let fd = Int32(value) else { return }
        let message = failure.flatMap { try? JSONEncoder().encode($0) } ?? Data("ready".utf8)
        _ = message.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Names this process `kvfs` for ps, top and pgrep (its comm, which
    /// exec took from the file name `/proc/self/exe`).
    static func nameProcess() {
        let fd = open("/proc/self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = write(fd, "kvfs", 4)
        close(fd)
    }

    /// Marks every open descriptor but `kept` close-on-exec. The daemon
    /// outlives this command, and must not hold the caller's descriptors: a
    /// caller waiting for a pipe or socket it gave `kvfs mount` to reach its
    /// end (`$(kvfs mount m)`, Foundation's `Process`) would wait forever.
    private static func closeOnExec(except kept: Set<Int32>) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for fd in names.compactMap(Int32.init) where !kept.contains(fd) {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    private static func readAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers = strings.map { strdup($0) }
        pointers.append(nil)
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}
