import Foundation
import LinuxSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A private mount namespace, held open by a process (`unshare -m
/// --propagation private`, then a shell waiting on a pipe) whose namespace
/// scripts enter (`nsenter -m`, ``runShell(_:in:environment:timeout:namespace:)``).
/// The pipe's other end is this process's, so the holder ends with the test
/// run even if it dies. Needs root; nil elsewhere.
public final class MountNamespace {
    /// The process that holds the namespace, for `nsenter -t`.
    public var holder: pid_t { process.pid }
    private let process: SpawnedProcess
    private let pipeEnd: FileDescriptor

    /// Makes the namespace, or nil when this process cannot (not root).
    public init?() {
        guard geteuid() == 0, let (readEnd, writeEnd) = try? FileDescriptor.pipe(options: .closeOnExec) else { return nil }
        var spawn = Spawn("/usr/bin/unshare", ["-m", "--propagation", "private", "/bin/sh", "-c", "read _"])
        spawn.standardInput = .descriptor(readEnd)
        let started = try? spawn.start()
        try? readEnd.close()
        guard let started else {
            try? writeEnd.close()
            return nil
        }
        process = started
        pipeEnd = writeEnd
        // unshare has made the namespace once the holder's mnt link differs from ours and it runs the shell.
        let mine = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/mnt")
        let made = poll(seconds: 1, every: 0.002) {
            let theirs = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(started.pid)/ns/mnt")
            return theirs != nil && theirs != mine && (try? String(contentsOfFile: "/proc/\(started.pid)/comm", encoding: .utf8)) == "sh\n"
        }
        guard made else {
            close()
            return nil
        }
    }

    /// Ends the holder; the namespace goes once no process is left in it.
    public func close() {
        try? pipeEnd.close()
        try? process.send(SIGKILL)
        _ = try? process.wait()
    }
}
