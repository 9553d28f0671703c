import LinuxSystem
import SystemPackage
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("LinuxSystem: TCP connections")
struct TCPConnectionTests {
    /// A listening socket on 127.0.0.1 at a port the kernel chose, and that port.
    private func listener() throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(fd >= 0 && bound && listen(fd, 4) == 0)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    @Test("a connection sends and receives; the peer's close reads as 0 bytes; a silent peer is ETIMEDOUT at the deadline, not before")
    func exchange() throws {
        let (server, port) = try listener()
        defer { close(server) }
        let connection = try TCPConnection.connect(host: "127.0.0.1", port: port, deadline: .now + .seconds(10))
        defer { connection.close() }
        #expect(fcntl(connection.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        let accepted = accept(server, nil, nil)
        try connection.send(all: Array("GET".utf8), deadline: .now + .seconds(10))
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(recv(accepted, &buffer, 16, 0) == 3)
        let start = ContinuousClock.now
        #expect(throws: SystemCallError("recv", errno: .timedOut)) { try connection.receive(into: &buffer, deadline: start + .milliseconds(50)) }
        #expect(ContinuousClock.now - start >= .milliseconds(50))
        _ = send(accepted, "ok", 2, 0)
        close(accepted)
        #expect(try connection.receive(into: &buffer, deadline: .now + .seconds(10)) == 2)
        #expect(try connection.receive(into: &buffer, deadline: .now + .seconds(10)) == 0)
    }

    @Test("errors: a port nobody listens on is ECONNREFUSED; a host that does not resolve says why")
    func errors() throws {
        let (server, port) = try listener()
        close(server)  // the port is free now
        #expect(throws: TCPConnection.ConnectError.unreachable(SystemCallError("connect", "127.0.0.1", errno: .connectionRefused))) {
            try TCPConnection.connect(host: "127.0.0.1", port: port, deadline: .now + .seconds(10))
        }
        #expect {
            try TCPConnection.connect(host: "no such host", port: port, deadline: .now + .seconds(10))
        } throws: { error in
            guard case .unresolved(let host, let reason) = error as? TCPConnection.ConnectError else { return false }
            return host == "no such host" && !reason.isEmpty
        }
    }
}
