import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A Unix-domain stream socket (`AF_UNIX`, `SOCK_STREAM`), close-on-exec
/// from its birth, as swift-system's `FileDescriptor` wraps a file: each
/// call retries on `EINTR` and throws the `errno` it failed with, naming the
/// call and the path.
///
/// A path longer than `sun_path` (108 bytes) is reached through
/// `/proc/self/fd/N/NAME`, N an open descriptor of its folder.
public struct UnixSocket: Sendable {
    /// The socket's descriptor: for reading and writing, and for ``Poll``.
    public let descriptor: FileDescriptor

    /// Wraps an open socket.
    public init(_ descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Connects to the socket listening at `path`.
    ///
    /// - Throws: `ENOENT` when there is no socket, `ECONNREFUSED` when
    ///   nobody listens on it (its process died).
    public static func connect(to path: String) throws(SystemCallError) -> UnixSocket {
        let socket = try stream(path)
        do {
            try withAddress(of: path) { address, length throws(SystemCallError) in
                try systemCall("connect", path) { Glibc.connect(socket.descriptor.rawValue, address, length) }
            }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// A socket listening at `path`, which must not exist, with room for
    /// `backlog` connections not yet accepted. It is made with the mode
    /// 0600 (the process's umask is 0177 while it is made, so a thread that
    /// creates a file meanwhile gets that umask too).
    public static func listen(at path: String, backlog: Int32 = 16) throws(SystemCallError) -> UnixSocket {
        let socket = try stream(path)
        do {
            let previousMask = umask(0o177)
            defer { umask(previousMask) }
            try withAddress(of: path) { address, length throws(SystemCallError) in
                try systemCall("bind", path) { bind(socket.descriptor.rawValue, address, length) }
            }
            try systemCall("listen", path) { Glibc.listen(socket.descriptor.rawValue, backlog) }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Waits for a connection and returns it, close-on-exec (`accept4` with
    /// `SOCK_CLOEXEC`: no window in which a `fork` elsewhere inherits it).
    ///
    /// - Throws: `ECONNABORTED` for a client that gave up before it was
    ///   accepted; `EINVAL` once ``shutdown()`` was called.
    public func accept() throws(SystemCallError) -> UnixSocket {
        // A GNU extension, which Swift's Glibc module leaves out: (int, struct sockaddr *, socklen_t *, int flags).
        typealias Accept4 = @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32
        guard let accept4 = cFunction("accept4", as: Accept4.self) else { throw SystemCallError("accept4", errno: .noFunction) }
        return UnixSocket(FileDescriptor(rawValue: try systemCall("accept4") {
            accept4(descriptor.rawValue, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
        }))
    }

    /// Who is at the other end (`SO_PEERCRED`): the process that connected,
    /// or, seen from the client, the one that made the listening socket.
    /// The kernel gives its pid as this process's pid namespace numbers it,
    /// so it holds across pid namespaces (0 when that namespace cannot see it).
    public func peerCredentials() throws(SystemCallError) -> PeerCredentials {
        var credentials = PeerCredentials()
        var size = socklen_t(MemoryLayout<PeerCredentials>.size)
        try systemCall("getsockopt SO_PEERCRED") { getsockopt(descriptor.rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &size) }
        return credentials
    }

    /// Makes a `read` or `write` that waits longer than `timeout` fail with
    /// `EAGAIN` (`SO_RCVTIMEO`, `SO_SNDTIMEO`), so a stalled peer cannot hold it forever.
    public func setTimeout(_ timeout: Duration) throws(SystemCallError) {
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            try systemCall("setsockopt") { setsockopt(descriptor.rawValue, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size)) }
        }
    }

    /// Shuts the socket down both ways: a thread blocked in ``accept()`` or
    /// a read returns. The descriptor stays open until ``close()``.
    public func shutdown() {
        _ = Glibc.shutdown(descriptor.rawValue, Int32(SHUT_RDWR))
    }

    /// Closes the descriptor.
    public func close() {
        try? descriptor.close()
    }

    private static func stream(_ path: String) throws(SystemCallError) -> UnixSocket {
        UnixSocket(FileDescriptor(rawValue: try systemCall("socket", path) {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }))
    }

    /// Calls `body` with the `sockaddr_un` of `path`.
    @discardableResult
    private static func withAddress<T>(of path: String,
                                       _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemCallError) -> T) throws(SystemCallError) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        var reached = path
        var folder: FileDescriptor?
        defer { try? folder?.close() }
        if path.utf8.count >= capacity {
            let slash = path.lastIndex(of: "/") ?? path.startIndex
            let folderPath = path[..<slash].isEmpty ? (path.hasPrefix("/") ? "/" : ".") : String(path[..<slash])
            let opened = try SystemCallError.naming("open", folderPath) {
                try FileDescriptor.open(folderPath, .readOnly, options: [.directory, .closeOnExec])
            }
            folder = opened
            reached = "/proc/self/fd/\(opened.rawValue)/" + path[path.index(after: slash)...]
            guard reached.utf8.count < capacity else { throw SystemCallError("bind", path, errno: .fileNameTooLong) }
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: reached.utf8)
            buffer[reached.utf8.count] = 0
        }
        return try withUnsafePointer(to: &address) { pointer throws(SystemCallError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemCallError) in
                try body(address, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

/// The credentials `SO_PEERCRED` gives (`struct ucred`, which Swift's Glibc
/// module leaves out: it needs `_GNU_SOURCE`).
public struct PeerCredentials: Hashable, Sendable {
    /// The peer's process, in this process's pid namespace; 0 when it is
    /// not in this namespace or one below it.
    public var pid: pid_t = 0
    /// Its effective user id, in this process's user namespace.
    public var uid: uid_t = 0
    /// Its effective group id.
    public var gid: gid_t = 0
}
