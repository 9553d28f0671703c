import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program a test or a benchmark starts: found on `PATH`, always stopped
/// (SIGTERM, then SIGKILL) and waited for, so that nothing is left running or
/// unreaped, even when the caller fails.
///
/// Shared by `kvfs-bench` and the SyncTests target (which links this file).
final class ChildProcess {
    let name: String
    private let process = Process()

    /// The program's full path, or nil when it is not installed (a name with a `/` is a path already).
    static func find(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// Starts `name` with `arguments`, its output going to `log` (or nowhere).
    init(_ name: String, _ arguments: [String], environment: [String: String] = [:], log: String? = nil) throws {
        guard let path = Self.find(name) else { throw ChildProcessError.notInstalled(name) }
        self.name = name
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = log.flatMap { path -> FileHandle? in
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = output ?? FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit { stop() }

    /// Stops the program and waits for it: SIGTERM, and SIGKILL after `grace` seconds.
    func stop(grace: TimeInterval = 20) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Runs a program to its end; returns its exit status and what it printed (standard error included).
    ///
    /// Through posix_spawn and waitpid rather than `Process`, whose wait
    /// takes some 50 ms on Linux: too slow for a REST call in a latency figure.
    static func run(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        guard let path = find(name) else { throw ChildProcessError.notInstalled(name) }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw ChildProcessError.failed(name, "no pipe") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        close(fds[1])
        defer { close(fds[0]) }
        guard spawned == 0 else { throw ChildProcessError.failed(name, String(cString: strerror(spawned))) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (exitStatus, String(decoding: output, as: UTF8.self))
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1 }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why a program could not be used.
enum ChildProcessError: Error, CustomStringConvertible {
    case notInstalled(String)
    case failed(String, String)

    var description: String {
        switch self {
        case let .notInstalled(name): "\(name) is not installed"
        case let .failed(what, output): "\(what) failed: \(output)"
        }
    }
}
