import Foundation
import LinuxSystem
import SystemPackage
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("LinuxSystem: Unix sockets")
struct UnixSocketTests {
    @Test("a listener is born 0600 and close-on-exec; a client connects, both ends exchange bytes, and each sees the other's credentials")
    func connectAcceptAndCredentials() throws {
        let folder = TemporaryFolder("kvfs-socket")
        defer { folder.cleanup() }
        let path = folder.path + "/s.sock"
        let listener = try UnixSocket.listen(at: path)
        defer { listener.close() }
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let client = try UnixSocket.connect(to: path)
        defer { client.close() }
        let server = try listener.accept()
        defer { server.close() }
        for socket in [listener, client, server] { #expect(fcntl(socket.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0) }
        try client.descriptor.write(all: Array("ping".utf8))
        #expect(try server.descriptor.read(exactly: 4) == Array("ping".utf8))
        for credentials in [try client.peerCredentials(), try server.peerCredentials()] {
            #expect(credentials.pid == getpid() && credentials.uid == geteuid() && credentials.gid == getegid())
        }
        client.close()
        #expect(try server.descriptor.read(exactly: 1) == nil)  // the peer's close is the end
    }

    @Test("a path longer than sun_path's 108 bytes is reached through its folder's descriptor")
    func longPath() throws {
        let folder = TemporaryFolder("kvfs-socket")
        defer { folder.cleanup() }
        let deep = folder.path + "/" + String(repeating: "d", count: 120)
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true)
        let path = deep + "/control.sock"
        #expect(path.utf8.count > 108)
        let listener = try UnixSocket.listen(at: path)
        defer { listener.close() }
        #expect(access(path, F_OK) == 0)
        let client = try UnixSocket.connect(to: path)
        client.close()
    }

    @Test("errors: no socket (ENOENT), nobody listening (ECONNREFUSED), a name taken (EADDRINUSE), no folder; accept after shutdown fails at once once the queue is empty; a silent peer times out")
    func errors() throws {
        let folder = TemporaryFolder("kvfs-socket")
        defer { folder.cleanup() }
        let path = folder.path + "/s.sock"
        #expect(throws: SystemCallError("connect", path, errno: .noSuchFileOrDirectory)) { try UnixSocket.connect(to: path) }
        let listener = try UnixSocket.listen(at: path)
        #expect(throws: SystemCallError("bind", path, errno: .addressInUse)) { try UnixSocket.listen(at: path) }
        listener.close()
        #expect(throws: SystemCallError("connect", path, errno: .connectionRefused)) { try UnixSocket.connect(to: path) }
        let missing = folder.path + "/none/" + String(repeating: "x", count: 120)
        #expect(throws: SystemCallError("open", folder.path + "/none", errno: .noSuchFileOrDirectory)) { try UnixSocket.listen(at: missing) }

        let other = try UnixSocket.listen(at: folder.path + "/t.sock")
        defer { other.close() }
        let client = try UnixSocket.connect(to: folder.path + "/t.sock")
        defer { client.close() }
        try client.setTimeout(.milliseconds(50))
        #expect(throws: SystemCallError("read", errno: .resourceTemporarilyUnavailable)) { try client.descriptor.read(exactly: 1) }
        other.shutdown()
        try other.accept().close()  // a connection queued before the shutdown is still accepted
        #expect(throws: SystemCallError("accept4", errno: .invalidArgument)) { try other.accept() }
    }

    @Test("shutdown wakes a thread blocked in accept")
    func shutdownWakesAccept() throws {
        let folder = TemporaryFolder("kvfs-socket")
        defer { folder.cleanup() }
        let listener = try UnixSocket.listen(at: folder.path + "/s.sock")
        defer { listener.close() }
        let done = try EventCounter()
        let outcome = Mutex<Errno?>(nil)
        Thread.detachNewThread {
            do { _ = try listener.accept() } catch { outcome.withLock { $0 = (error as? SystemCallError)?.errno } }
            done.signal()
        }
        #expect(!done.wait(timeout: .milliseconds(100)))  // blocked
        listener.shutdown()
        #expect(done.wait(timeout: .seconds(10)))
        #expect(outcome.withLock { $0 } == .invalidArgument)
    }
}
