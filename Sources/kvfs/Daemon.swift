import Foundation
import KVFileSystem
import LinuxSystem
import SystemPackage

/// Runs the mount as a daemon: this process starts itself again with
/// `--foreground` in a new session and waits until the child says the mount is
/// ready (or why it is not, as a JSON ``CommandError``), so `kvfs mount m &&
/// cat m/k` works.
enum Daemon {
    private static let readyVariable = "KVFS_READY_FD"

    /// Whether this process is a daemon started by ``start(arguments:mountPoint:log:)``.
    static var isChild: Bool { ProcessInfo.processInfo.environment[readyVariable] != nil }

    static func start(arguments: [String], mountPoint: String, log: String) throws {
        let (readEnd, writeEnd) = try SystemCallError.naming("pipe") { try FileDescriptor.pipe() }
        // Only the write end reaches the daemon (its number in the environment).
        closeOnExec(except: [0, 1, 2, writeEnd.rawValue])
        // The very binary running now (/proc/self/exe), named `kvfs` in argv
        // (and in ps, once the daemon renames itself: see ``nameProcess()``).
        // Its standard streams are /dev/null: it opens daemon.log as standard
        // error first thing, so a crash never prints on the caller's terminal.
        // A new session, every signal unblocked and the stopping ones at their
        // defaults: a caller on a Dispatch thread (which blocks SIGTERM) must
        // not leave a daemon that SIGTERM cannot stop.
        var spawn = Spawn("/proc/self/exe", CommandLineRewrite.rewrite(arguments) + ["--foreground"])
        spawn.name = "kvfs"
        spawn.newSession = true
        spawn.environment = ProcessInfo.processInfo.environment.merging([readyVariable: String(writeEnd.rawValue)]) { $1 }
        let daemon: SpawnedProcess
        do {
            defer { try? writeEnd.close() }
            daemon = try spawn.start()
        } catch {
            try? readEnd.close()
            throw CommandError("cannot start the kvfs daemon: \(error.errno)")
        }
        let message = String(decoding: (try? readEnd.readToEnd()) ?? [], as: UTF8.self)
        try? readEnd.close()
        if message == "ready" { return }
        let ended = try? daemon.wait()
        if let failure = try? JSONDecoder().decode(CommandError.self, from: Data(message.utf8)) { throw failure }
        if case .signalled(let signal) = ended {
            throw CommandError("the kvfs daemon for \(mountPoint) crashed (signal \(signal)) before the mount was ready; see \(log)")
        }
        throw CommandError("the kvfs daemon for \(mountPoint) exited before the mount was ready; see \(log)")
    }

    /// Tells a waiting `kvfs mount` that the mount is ready (nil) or why it
    /// failed. Run in the foreground, prints the failure instead.
    static func reportReady(_ failure: CommandError?) {
        guard let value = ProcessInfo.processInfo.environment[readyVariable], let number = Int32(value) else { return }
        let message = failure.flatMap { try? JSONEncoder().encode($0) } ?? Data("ready".utf8)
        let pipe = FileDescriptor(rawValue: number)
        try? pipe.write(all: message)
        try? pipe.close()
    }

    /// Names this process `kvfs` for ps, top and pgrep (its comm, which
    /// exec took from the file name `/proc/self/exe`).
    static func nameProcess() {
        try? ProcessFolder.current.setName("kvfs")
    }

    /// Marks every open descriptor but `kept` close-on-exec. The daemon
    /// outlives this command, and must not hold the caller's descriptors: a
    /// caller waiting for a pipe or socket it gave `kvfs mount` to reach its
    /// end (`$(kvfs mount m)`, Foundation's `Process`) would wait forever.
    private static func closeOnExec(except kept: Set<Int32>) {
        let descriptors = (try? ProcessFolder.current.descriptors()) ?? []
        for fd in descriptors where !kept.contains(fd) {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}
