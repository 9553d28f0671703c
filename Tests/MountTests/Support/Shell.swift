import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a shell script printed and how it ended.
struct ShellResult: CustomStringConvertible {
    var status: Int32
    var output: String
    var error: String

    /// For failed expectations: everything there is to know.
    var description: String { "status \(status)\n--- stdout:\n\(output)--- stderr:\n\(error)" }
}

/// Where the tests find the built `kvfs`, and whether FUSE can be mounted here.
enum MountEnvironment {
    /// The build's products folder: the one holding this test binary (`…/debug/kvfsPackageTests.xctest`).
    static let productsDirectory: URL = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).standardizedFileURL
        // On Darwin the binary sits inside the .xctest bundle; on Linux the .xctest is the binary.
        while url.pathComponents.count > 1 && url.pathExtension != "xctest" { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent()
    }()

    /// The `kvfs` executable: `$KVFS_BINARY`, or `kvfs` next to the test bundle.
    static let kvfs: String = ProcessInfo.processInfo.environment["KVFS_BINARY"]
        ?? productsDirectory.appendingPathComponent("kvfs").path

    /// Why FUSE mounts cannot run here, or nil when they can.
    static let fuseUnavailableReason: String? = {
        let fd = open("/dev/fuse", O_RDWR)
        guard fd >= 0 else { return "/dev/fuse cannot be opened (\(String(cString: strerror(errno))))" }
        close(fd)
        guard access("/bin/fusermount3", X_OK) == 0 else { return "/bin/fusermount3 is missing (install fuse3)" }
        return nil
    }()

    /// Whether the mount tests can run; prints why not, so a skip is never silent.
    static var canMount: Bool {
        if let reason = fuseUnavailableReason {
            print("MountTests: SKIPPED — FUSE cannot be mounted here: \(reason)")
            return false
        }
        return true
    }

    /// Records a failure (once per test) when the binary was not built.
    static func requireBinary(sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard access(kvfs, X_OK) == 0 else {
            Issue.record("the kvfs executable is missing at \(kvfs): run `swift build --build-tests` first (or set KVFS_BINARY)",
                         sourceLocation: sourceLocation)
            throw MissingBinary()
        }
    }

    struct MissingBinary: Error {}
}

/// Runs `script` with `/bin/sh -c` in `directory` with `environment`, killed
/// (with everything it started in its process group) after `timeout` seconds
/// so a hung filesystem fails the test instead of hanging it.
///
/// posix_spawn and waitpid, not Foundation's `Process`, which waits for a
/// descriptor it gives the child to close: a daemon the script leaves behind
/// holding it would hang the test (the very bug `kvfs mount` once had).
///
/// With `namespace` (a process's pid) the shell runs in that process's mount namespace.
func runShell(_ script: String, in directory: String, environment: [String: String], timeout: Int = 60,
              namespace: pid_t? = nil) throws -> ShellResult {
    let outputPath = directory + "/.shell-out-\(UUID().uuidString)"
    let errorPath = directory + "/.shell-err-\(UUID().uuidString)"
    defer {
        unlink(outputPath)
        unlink(errorPath)
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    // Dispatch's threads block SIGTERM, and a child inherits the mask: unblock
    // it, or `timeout` and `kill` in a script could not stop what they start.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, Int16(0x08))  // POSIX_SPAWN_SETSIGMASK
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    posix_spawnattr_setsigmask(&attributes, &unblocked)
    let enter = namespace.map { ["/usr/bin/nsenter", "-t", String($0), "-m", "--"] } ?? []
    let arguments = ["/usr/bin/timeout", "-k", "5", String(timeout)] + enter
        + ["/bin/sh", "-c", "cd \"$1\" && shift && eval \"$1\"", "sh", directory, script]
    let variables = environment.map { "\($0.key)=\($0.value)" }
    var pid: pid_t = 0
    let status = withCStrings(arguments) { argv in
        withCStrings(variables) { envp in posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp) }
    }
    guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
    var exitStatus: Int32 = 0
    while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
    let output = FileManager.default.contents(atPath: outputPath) ?? Data()
    let error = FileManager.default.contents(atPath: errorPath) ?? Data()
    let code = exitStatus & 0x7f == 0 ? (exitStatus >> 8) & 0xff : 128 + (exitStatus & 0x7f)
    return ShellResult(status: code, output: String(decoding: output, as: UTF8.self), error: String(decoding: error, as: UTF8.self))
}

func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    var pointers = strings.map { strdup($0) }
    pointers.append(nil)
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}
