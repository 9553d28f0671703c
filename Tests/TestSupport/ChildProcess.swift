import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// A program a test or a benchmark starts: found on `PATH`, always stopped
/// (SIGTERM, then SIGKILL) and waited for, so that nothing is left running or
/// unreaped, even when the caller fails. Started through LinuxSystem's
/// ``Spawn``, the one way kvfs starts a process.
public final class ChildProcess {
    /// The program's name, as given.
    public let name: String
    private let process: SpawnedProcess
    private var ended = false

    /// The program's full path, or nil when it is not installed (a name with a `/` is a path already).
    public static func find(_ name: String) -> String? {
        Spawn.find(name)
    }

    /// Starts `name` with `arguments` and this process's environment with
    /// `environment` over it, its output going to `log` (or nowhere).
    public init(_ name: String, _ arguments: [String], environment: [String: String] = [:], log: String? = nil) throws {
        self.name = name
        var spawn = try Self.spawn(name, arguments, environment: environment)
        if let log {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            spawn.standardOutput = .appending(log)
            spawn.standardError = .appending(log)
        }
        do { process = try spawn.start() } catch { throw ChildProcessError.failed(name, error.description) }
    }

    deinit { stop() }

    /// Stops the program and waits for it: SIGTERM, and SIGKILL after `grace` seconds.
    public func stop(grace: TimeInterval = 20) {
        guard !ended else { return }
        ended = true
        guard (try? process.exitStatus()) == nil else { return }
        try? process.send(SIGTERM)
        guard !poll(seconds: grace, until: { (try? process.exitStatus()) != nil }) else { return }
        try? process.send(SIGKILL)
        _ = try? process.wait()
    }

    /// Runs a program to its end; returns its exit status (as a shell gives
    /// it: 128 plus the signal for a signalled end) and what it printed
    /// (standard error too, in ``ShellResult/output``).
    ///
    /// Through ``Spawn`` and a pipe rather than ``runShell(_:in:environment:timeout:namespace:)``'s
    /// `timeout` and files, or Foundation's `Process`, whose wait takes some
    /// 50 ms on Linux: this is the benchmarks' REST call, timed in a latency figure.
    public static func run(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ShellResult {
        let spawn = try spawn(name, arguments, environment: environment)
        do {
            let (status, output) = try spawn.runCollectingOutput()
            return ShellResult(status: status.shellStatus, output: String(decoding: output, as: UTF8.self), error: "")
        } catch {
            throw ChildProcessError.failed(name, error.description)
        }
    }

    /// `name` to start with `arguments`, this process's environment and `environment` over it.
    private static func spawn(_ name: String, _ arguments: [String], environment: [String: String]) throws -> Spawn {
        guard let path = find(name) else { throw ChildProcessError.notInstalled(name) }
        var spawn = Spawn(path, arguments)
        spawn.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        return spawn
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    public static func freePort() -> Int {
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
public enum ChildProcessError: Error, CustomStringConvertible {
    /// It is not on `PATH`.
    case notInstalled(String)
    /// Doing something (the first value) failed, as the second says.
    case failed(String, String)

    /// What went wrong, in a line.
    public var description: String {
        switch self {
        case let .notInstalled(name): "\(name) is not installed"
        case let .failed(what, output): "\(what) failed: \(output)"
        }
    }
}
