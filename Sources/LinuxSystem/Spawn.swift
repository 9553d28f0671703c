import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// How a program is started: the one way the layers start a process.
///
/// A small `posix_spawn(3)` wrapper, not swiftlang/swift-subprocess, because
/// of what its callers need:
/// - it is synchronous. `FUSESession.stop()` starts `stat -f` from a signal
///   watcher thread or from inside a filesystem request, and the daemon's
///   start waits on a pipe in a plain command; Subprocess's API is `async`,
///   and blocking a thread on a task there risks the very hang stop() exists to end;
/// - it adds no process-wide machinery. Subprocess on Linux starts a
///   monitor thread (epoll on pidfds) and, on kernels without pidfd, installs
///   a SIGCHLD handler for the whole process: in a FUSE daemon that handles
///   its own signals and whose loop threads libfuse owns;
/// - the daemon's start of itself passes the pipe on which it says "ready"
///   as an inherited descriptor named in the environment, and needs a new
///   session with every signal unblocked and the stopping ones at their
///   defaults; Subprocess closes every descriptor but the standard three.
///
/// Descriptors that are not close-on-exec are inherited, as with `posix_spawn`.
public struct Spawn: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// This process's own stream of the same number.
        case inherit
        /// A descriptor of this process (duplicated into place).
        case descriptor(FileDescriptor)
        /// A file, created if missing (mode 0600), appended to.
        case appending(String)
    }

    /// The program: a path, or a name looked up on `PATH`.
    public var program: String
    /// The arguments after the program's name.
    public var arguments: [String]
    /// `argv[0]`; nil: ``program``.
    public var name: String?
    /// The environment; nil: this process's.
    public var environment: [String: String]?
    /// Standard input.
    public var standardInput = Stream.null
    /// Standard output.
    public var standardOutput = Stream.null
    /// Standard error.
    public var standardError = Stream.null
    /// Start the child in a session of its own (`setsid`), with every signal
    /// unblocked and SIGTERM, SIGINT, SIGHUP and SIGPIPE at their default
    /// actions: a daemon that SIGTERM stops, whatever the starting thread
    /// blocked or ignored (Dispatch's threads block SIGTERM).
    public var newSession = false

    /// Describes the start of `program` with `arguments`, its standard streams on `/dev/null`.
    public init(_ program: String, _ arguments: [String] = []) {
        self.program = program
        self.arguments = arguments
    }

    /// The program's full path, or nil when it is not found: a name with a
    /// `/` is a path already; another is looked up on `PATH`.
    public static func find(_ program: String, path: String? = nil) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        let folders = path ?? getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        return folders.split(separator: ":").map { "\($0)/\(program)" }.first { access($0, X_OK) == 0 }
    }

    /// Starts the program (`posix_spawn`).
    public func start() throws(SystemCallError) -> SpawnedProcess {
        let searchPath = environment?["PATH"]
        guard let path = Self.find(program, path: searchPath) else { throw SystemCallError("posix_spawn", program, errno: .noSuchFileOrDirectory) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (number, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, number, "/dev/null", number == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherit: break
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor.rawValue, number)
            case .appending(let file): posix_spawn_file_actions_addopen(&actions, number, file, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if newSession {
            // POSIX_SPAWN_SETSID | SETSIGMASK | SETSIGDEF (Glibc's module does not export the first).
            posix_spawnattr_setflags(&attributes, Int16(0x80 | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            posix_spawnattr_setsigmask(&attributes, &unblocked)
            var stopping = sigset_t()
            sigemptyset(&stopping)
            for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&stopping, signal) }
            posix_spawnattr_setsigdefault(&attributes, &stopping)
        }
        let argv = [name ?? program] + arguments
        let envp = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        var pid: pid_t = 0
        let status = withCStrings(argv) { argv in
            if let envp { return withCStrings(envp) { posix_spawn(&pid, path, &actions, &attributes, argv, $0) } }
            return posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        }
        guard status == 0 else { throw SystemCallError("posix_spawn", path, errno: Errno(rawValue: status)) }
        return SpawnedProcess(pid: pid, program: program)
    }

    /// Starts the program and waits for it to end.
    public func run() throws(SystemCallError) -> ExitStatus {
        try start().wait()
    }

    /// Starts the program with its standard output and error on one pipe,
    /// reads the pipe to its end and waits: the exit status and what it printed.
    public func runCollectingOutput() throws(SystemCallError) -> (status: ExitStatus, output: [UInt8]) {
        let (readEnd, writeEnd) = try SystemCallError.naming("pipe") { try FileDescriptor.pipe(options: .closeOnExec) }
        defer { try? readEnd.close() }
        var spawn = self
        spawn.standardOutput = .descriptor(writeEnd)
        spawn.standardError = .descriptor(writeEnd)
        let child: SpawnedProcess
        do {
            defer { try? writeEnd.close() }
            child = try spawn.start()
        }
        let output = try readEnd.readToEnd()
        return (try child.wait(), output)
    }
}

/// How a process ended.
public enum ExitStatus: Hashable, Sendable, CustomStringConvertible {
    /// It exited with this status.
    case exited(Int32)
    /// A signal ended it.
    case signalled(Int32)

    /// Decodes a `waitpid` status.
    public init(waitStatus status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    /// Whether it exited with status 0.
    public var succeeded: Bool { self == .exited(0) }

    /// The status as a shell gives it in `$?`: the exit status, or 128 plus the signal.
    public var shellStatus: Int32 {
        switch self {
        case .exited(let status): status
        case .signalled(let signal): 128 + signal
        }
    }

    /// `exit status N` or `signal N`.
    public var description: String {
        switch self {
        case .exited(let status): "exit status \(status)"
        case .signalled(let signal): "signal \(signal)"
        }
    }
}

/// A process this one started: to wait for, or to signal.
public struct SpawnedProcess: Hashable, Sendable {
    /// Its process id.
    public let pid: pid_t
    /// The program it runs, for messages.
    public let program: String

    /// Waits for it to end (`waitpid`, retried on `EINTR`).
    public func wait() throws(SystemCallError) -> ExitStatus {
        var status: Int32 = 0
        _ = try systemCall("waitpid", program) { waitpid(pid, &status, 0) }
        return ExitStatus(waitStatus: status)
    }

    /// Its exit status if it has ended (and reaps it), else nil (`waitpid` with `WNOHANG`).
    public func exitStatus() throws(SystemCallError) -> ExitStatus? {
        var status: Int32 = 0
        let reaped = try systemCall("waitpid", program) { waitpid(pid, &status, WNOHANG) }
        return reaped == 0 ? nil : ExitStatus(waitStatus: status)
    }

    /// Sends it `signal`.
    public func send(_ signal: Int32) throws(SystemCallError) {
        _ = try systemCall("kill", program) { kill(pid, signal) }
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}
