import FUSEKit
import Foundation
import Glibc
@_exported import TestSupport

/// A FUSEKit session mounted at a fresh temporary directory and served on a
/// background thread. Call ``close()`` (in a `defer`) to stop, unmount and
/// remove the directory, even when the test fails.
final class TestMount: @unchecked Sendable {
    // @unchecked: `runError` is written by the loop thread before it signals
    // `finished`, and read only after waiting for `finished`.

    /// Whether this machine can mount FUSE filesystems at all.
    static let isSupported: Bool = {
        guard access("/dev/fuse", R_OK | W_OK) == 0 else { return false }
        return geteuid() == 0 || access("/usr/bin/fusermount3", X_OK) == 0 || access("/bin/fusermount3", X_OK) == 0
    }()

    let fileSystem: any FileSystemOperations
    let session: FUSESession
    let folder = TemporaryFolder("fusekit-test")
    var path: String { folder.path }
    private let finished = DispatchSemaphore(value: 0)
    private var runError: Errno?
    private var closed = false

    init(_ fileSystem: any FileSystemOperations = MemoryFileSystem(),
         options: MountOptions = MountOptions(fsName: "fusekit-test", subtype: "fusekittest"),
         loop: LoopConfiguration = .multiThreaded()) throws {
        self.fileSystem = fileSystem
        do {
            session = try FUSESession(fileSystem: fileSystem, options: options)
            try session.mount(at: path)
        } catch {
            folder.cleanup()
            throw error
        }
        let session = self.session
        let thread = Thread { [self] in
            do throws(Errno) { try session.run(loop) } catch { runError = error }
            finished.signal()
        }
        thread.start()
    }

    /// The filesystem, for mounts of a ``MemoryFileSystem``.
    var memory: MemoryFileSystem { fileSystem as! MemoryFileSystem }

    /// `path/name`.
    func file(_ name: String) -> String { path + "/" + name }

    /// Waits up to `seconds` for ``FUSESession/run(_:)`` to return; its error if it threw.
    func waitForLoop(seconds: Double = 15) -> Result<Void, Errno>? {
        guard finished.wait(timeout: .now() + seconds) == .success else { return nil }
        finished.signal()  // let later waiters through too
        return runError.map { .failure($0) } ?? .success(())
    }

    /// Stops the session, waits for the loop, and removes the mount point.
    func close() {
        guard !closed else { return }
        closed = true
        session.stop()
        _ = waitForLoop()
        if TestMount.isMounted(path) { _ = umount2(path, Int32(MNT_DETACH)) }
        rmdir(path)  // not folder.cleanup(): a mount left on it must not be emptied
    }

    /// Whether `/proc/mounts` lists a mount at `path`.
    static func isMounted(_ path: String) -> Bool {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return false }
        return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first.map(String.init) == path }
    }
}

/// Runs `command` with `/bin/sh -c`, killed after 30 seconds so that a hung
/// filesystem fails the test instead of hanging it.
@discardableResult
func sh(_ command: String) throws -> ShellResult {
    try runShell(command, in: NSTemporaryDirectory(), environment: ProcessInfo.processInfo.environment, timeout: 30)
}

/// `renameat2(2)`, looked up at run time: Glibc's Swift module does not export it.
func renameat2(_ from: String, _ to: String, flags: UInt32) -> Int32 {
    typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "renameat2") else {
        errno = ENOSYS
        return -1
    }
    let function = unsafeBitCast(symbol, to: RenameAt2.self)
    return function(AT_FDCWD, from, AT_FDCWD, to, flags)
}

/// A libc function looked up at run time, for what Glibc's Swift module does not export.
private func libc<T>(_ name: String, as type: T.Type) -> T {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else { fatalError("no \(name) in libc") }
    return unsafeBitCast(symbol, to: type)
}

/// `getxattr(2)` into a buffer of `size` bytes (0: the size probe): the result and the bytes.
func getxattr(_ path: String, _ name: String, size: Int) -> (result: Int, value: [UInt8]) {
    typealias Function = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
    var buffer = [UInt8](repeating: 0, count: size)
    let result = buffer.withUnsafeMutableBytes { libc("getxattr", as: Function.self)(path, name, size == 0 ? nil : $0.baseAddress, size) }
    return (result, Array(buffer.prefix(max(0, result))))
}

/// `listxattr(2)` into a buffer of `size` bytes (0: the size probe): the result and the bytes.
func listxattr(_ path: String, size: Int) -> (result: Int, value: [UInt8]) {
    typealias Function = @convention(c) (UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
    var buffer = [UInt8](repeating: 0, count: size)
    let result = buffer.withUnsafeMutableBytes { libc("listxattr", as: Function.self)(path, size == 0 ? nil : $0.baseAddress, size) }
    return (result, Array(buffer.prefix(max(0, result))))
}

/// `setxattr(2)`.
func setxattr(_ path: String, _ name: String, _ value: String, flags: Int32) -> Int32 {
    typealias Function = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32
    let bytes = Array(value.utf8)
    return bytes.withUnsafeBytes { libc("setxattr", as: Function.self)(path, name, $0.baseAddress, $0.count, flags) }
}
