import Foundation
import LinuxSystem
import SystemPackage
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("LinuxSystem: flock")
struct FileLockingTests {
    @Test("two open files of one path exclude each other; a try fails at once while the other holds it, and /proc/locks names the holder")
    func exclusionAndHolder() throws {
        let folder = TemporaryFolder("kvfs-flock")
        defer { folder.cleanup() }
        let path = folder.path + "/lock"
        let first = try FileDescriptor.open(path, .readWrite, options: [.create, .closeOnExec], permissions: .ownerReadWrite)
        let second = try FileDescriptor.open(path, .readWrite, options: .closeOnExec)
        defer { try? first.close(); try? second.close() }
        #expect(try first.flockHolders() == [])
        try first.lock(.exclusive)
        #expect(try second.flockHolders() == [getpid()])
        #expect(try !second.tryLock(.exclusive))
        #expect(try !second.tryLock(.shared))
        first.unlock()
        #expect(try second.tryLock(.shared))
        #expect(try first.tryLock(.shared))  // shared with shared
        #expect(try first.flockHolders() == [getpid(), getpid()])
        #expect(try !FileDescriptor.open(path, .readOnly).tryLock(.exclusive))
    }

    @Test("another process's lock: a try fails, the holder is that process, and lock waits until it lets go")
    func otherProcess() throws {
        let folder = TemporaryFolder("kvfs-flock")
        defer { folder.cleanup() }
        let path = folder.path + "/lock"
        let file = try FileDescriptor.open(path, .readOnly, options: [.create, .closeOnExec], permissions: .ownerReadWrite)
        let holder = try Spawn("/usr/bin/flock", [path, "sleep", "2"]).start()
        // Reaped whatever happens: an exit test's monitor waits for any child, and an unreaped one stalls it.
        defer { _ = try? holder.wait() }
        defer { try? file.close() }
        let found = try waitFor { try file.flockHolders().first }
        #expect(found == holder.pid)
        #expect(try !file.tryLock(.exclusive))
        try file.lock(.exclusive)  // returns once flock(1) has exited
        #expect(try holder.wait() == .exited(0))
    }

    @Test("errors: a closed descriptor is EBADF, for lock, tryLock and holders")
    func badDescriptor() throws {
        let closed = FileDescriptor(rawValue: 987)
        #expect(throws: SystemCallError("flock", errno: .badFileDescriptor)) { try closed.lock(.exclusive) }
        #expect(throws: SystemCallError("flock", errno: .badFileDescriptor)) { try closed.tryLock(.shared) }
        #expect(throws: SystemCallError("fstat", errno: .badFileDescriptor)) { try closed.flockHolders() }
    }

    /// `body`'s first non-nil answer, looked for every 10 ms for up to 10 s.
    private func waitFor<T>(_ body: () throws -> T?) throws -> T? {
        for _ in 0..<1000 {
            if let value = try body() { return value }
            usleep(10_000)
        }
        return nil
    }
}

@Suite("LinuxSystem: inotify")
struct InotifyTests {
    @Test("a watched folder's changes are queued with their watch, kind and name; the descriptor is readable while they are; a drained queue reads empty")
    func events() throws {
        let folder = TemporaryFolder("kvfs-inotify")
        defer { folder.cleanup() }
        let inotify = try Inotify()
        let watch = try inotify.watch(folder.path, for: [.create, .closeWrite, .delete, .onlyDirectory])
        #expect(try inotify.watch(folder.path, for: [.create, .closeWrite, .delete]) == watch)  // the same watch again
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(try inotify.read(into: &buffer) == [])
        #expect(try inotify.descriptor.wait(for: .readable, timeout: .zero) == [])
        let file = try FileDescriptor.open(folder.path + "/a", .writeOnly, options: .create, permissions: .ownerReadWrite)
        try file.close()
        unlink(folder.path + "/a")
        #expect(try inotify.descriptor.wait(for: .readable, timeout: .seconds(10)) == .readable)
        let seen = try inotify.read(into: &buffer)
        #expect(seen.map(\.watch) == [watch, watch, watch])
        #expect(seen.map(\.name) == ["a", "a", "a"])
        #expect(seen.map { $0.events.subtracting(.init(rawValue: UInt32(IN_ISDIR))) } == [.create, .closeWrite, .delete])
        #expect(try inotify.read(into: &buffer) == [])
    }

    @Test("errors: a missing path is ENOENT, a file with onlyDirectory is ENOTDIR")
    func errors() throws {
        let folder = TemporaryFolder("kvfs-inotify")
        defer { folder.cleanup() }
        let inotify = try Inotify()
        #expect(throws: SystemCallError("inotify_add_watch", folder.path + "/none", errno: .noSuchFileOrDirectory)) {
            try inotify.watch(folder.path + "/none", for: .create)
        }
        #expect(FileManager.default.createFile(atPath: folder.path + "/f", contents: nil))
        #expect(throws: SystemCallError("inotify_add_watch", folder.path + "/f", errno: .notDirectory)) {
            try inotify.watch(folder.path + "/f", for: [.create, .onlyDirectory])
        }
    }
}
