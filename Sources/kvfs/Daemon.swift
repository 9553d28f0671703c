import Foundation
import KVFileSystem
#if canImport(Glibc)
import Glibc
#endif

/// Runs the mount as a daemon: this process starts itself again with
/// `--foreground` in a new session and waits until the child says the mount is
/// ready (or why it is not), so `kvfs mount m && cat m/k` works.
enum Daemon {
    private static let readyVariable = "KVFS_READY_FD"

    static func start(arguments: [String], mountPoint: String) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw CommandError.system("cannot create a pipe for", mountPoint) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        closeOnExec(except: [0, 1, 2, writeEnd])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
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
        let argv = ["/proc/self/exe"] + FstabArguments.rewrite(arguments) + ["--foreground"]
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
        waitpid(pid, &exitStatus, 0)
        throw CommandError(message.isEmpty ? "the kvfs daemon for \(mountPoint) exited before the mount was ready" : message)
    }

    /// Tells a waiting `kvfs mount` that the mount is ready (nil) or why it
    /// failed; once ready, the daemon's warnings go to `log`.
    static func reportReady(_ error: String?, log: String) {
        guard let value = ProcessInfo.processInfo.environment[readyVariable], let fd = Int32(value) else {
            if let error { FileHandle.standardError.write(Data("kvfs: \(error)\n".utf8)) }
            return
        }
        let message = Array((error ?? "ready").utf8)
        _ = message.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        // Nobody reads the daemon's standard error once the parent has gone, and
        // holding it open would keep a caller's pipe from ever reaching its end.
        if error == nil {
            let file = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            dup2(file >= 0 ? file : open("/dev/null", O_WRONLY), 2)
            if file >= 0 { close(file) }
        }
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
