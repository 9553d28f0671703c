import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// How a program ended and what it printed: the one result of every shell
/// script and program the tests run.
public struct ShellResult: CustomStringConvertible, Sendable {
    /// The exit status, or 128 + the signal that ended it.
    public var status: Int32
    /// Its standard output (with standard error too, for ``ChildProcess/run(_:_:environment:)``).
    public var output: String
    /// Its standard error.
    public var error: String

    /// Makes a result.
    public init(status: Int32, output: String, error: String) {
        self.status = status
        self.output = output
        self.error = error
    }

    /// For failed expectations: everything there is to know.
    public var description: String { "status \(status)\n--- stdout:\n\(output)--- stderr:\n\(error)" }
}

/// Runs `script` with `/bin/sh -c` in `directory` with `environment` (its
/// whole environment), killed (with everything it started in its process
/// group) after `timeout` seconds, so that a hung filesystem fails the test
/// instead of hanging it. Standard input is /dev/null; standard output and
/// error are caught in files in `directory`, so that a daemon the script
/// leaves behind cannot keep the test waiting for a pipe to close. The shell
/// runs in a session of its own (``Spawn/newSession``).
///
/// With `namespace` (a process's pid) the shell runs in that process's mount namespace.
public func runShell(_ script: String, in directory: String, environment: [String: String], timeout: Int = 60,
                     namespace: pid_t? = nil) throws -> ShellResult {
    let outputPath = directory + "/.shell-out-\(UUID().uuidString)"
    let errorPath = directory + "/.shell-err-\(UUID().uuidString)"
    defer {
        unlink(outputPath)
        unlink(errorPath)
    }
    let enter = namespace.map { ["/usr/bin/nsenter", "-t", String($0), "-m", "--"] } ?? []
    var spawn = Spawn("/usr/bin/timeout", ["-k", "5", String(timeout)] + enter
        + ["/bin/sh", "-c", "cd \"$1\" && shift && eval \"$1\"", "sh", directory, script])
    spawn.environment = environment
    spawn.standardOutput = .appending(outputPath)
    spawn.standardError = .appending(errorPath)
    // Every signal unblocked (Dispatch's threads block SIGTERM, and a child inherits the mask),
    // or `timeout` and `kill` in a script could not stop what it starts.
    spawn.newSession = true
    let status = try spawn.run().shellStatus
    let output = FileManager.default.contents(atPath: outputPath) ?? Data()
    let error = FileManager.default.contents(atPath: errorPath) ?? Data()
    return ShellResult(status: status, output: String(decoding: output, as: UTF8.self), error: String(decoding: error, as: UTF8.self))
}
