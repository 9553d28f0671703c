import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection, close-on-exec and non-blocking, whose every wait ends
/// at a deadline: for a short request to a local service that may hang
/// (Syncthing's REST API). Each call retries on `EINTR`; a wait that reaches
/// the deadline throws `ETIMEDOUT`.
public struct TCPConnection: Sendable {
    /// Why ``connect(host:port:deadline:)`` failed.
    public enum ConnectError: Error, Hashable, Sendable {
        /// `getaddrinfo` found no address for the host; the reason is `gai_strerror`'s.
        case unresolved(host: String, reason: String)
        /// No address took the connection: the last one's error.
        case unreachable(SystemCallError)
    }

    /// The socket's descriptor.
    public let descriptor: FileDescriptor

    /// Connects to `host` (a name or an address) at `port`, trying each
    /// address the resolver gives in turn until one answers or the deadline passes.
    public static func connect(host: String, port: UInt16, deadline: ContinuousClock.Instant) throws(ConnectError) -> TCPConnection {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else { throw .unresolved(host: host, reason: String(cString: gai_strerror(status))) }
        defer { freeaddrinfo(list) }
        var failure = SystemCallError("connect", host, errno: .noSuchAddressOrDevice)
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry?.pointee {
            entry = info.ai_next
            do throws(SystemCallError) {
                let fd = try systemCall("socket", host) {
                    socket(info.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                }
                let connection = TCPConnection(descriptor: FileDescriptor(rawValue: fd))
                do throws(SystemCallError) {
                    try connection.finishConnecting(to: info, host: host, deadline: deadline)
                    return connection
                } catch {
                    connection.close()
                    throw error
                }
            } catch {
                failure = error
            }
        }
        throw .unreachable(failure)
    }

    /// Sends all of `bytes`, waiting for room as long as the deadline allows.
    public func send(all bytes: [UInt8], deadline: ContinuousClock.Instant) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let result = systemCallResult("send") {
                bytes[offset...].withUnsafeBytes { Glibc.send(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            switch result {
            case .success(let sent): offset += sent
            case .failure(let error) where error.errno == .wouldBlock: try wait(for: .writable, call: "send", deadline: deadline)
            case .failure(let error): throw error
            }
        }
    }

    /// Receives what has come, at most `buffer.count` bytes, waiting for some
    /// as long as the deadline allows.
    ///
    /// - Returns: how many bytes came; 0 once the peer has closed its side.
    public func receive(into buffer: inout [UInt8], deadline: ContinuousClock.Instant) throws(SystemCallError) -> Int {
        while true {
            let result = systemCallResult("recv") { buffer.withUnsafeMutableBytes { recv(descriptor.rawValue, $0.baseAddress, $0.count, 0) } }
            switch result {
            case .success(let count): return count
            case .failure(let error) where error.errno == .wouldBlock: try wait(for: .readable, call: "recv", deadline: deadline)
            case .failure(let error): throw error
            }
        }
    }

    /// Closes the connection.
    public func close() {
        try? descriptor.close()
    }

    /// A non-blocking connect: started, then waited for, then its outcome read (`SO_ERROR`).
    private func finishConnecting(to info: addrinfo, host: String, deadline: ContinuousClock.Instant) throws(SystemCallError) {
        let started = systemCallResult("connect", host) { Glibc.connect(descriptor.rawValue, info.ai_addr, info.ai_addrlen) }
        switch started {
        case .success: return
        case .failure(let error) where error.errno == .nowInProgress: break
        case .failure(let error): throw error
        }
        try wait(for: .writable, call: "connect", deadline: deadline)
        var outcome: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        try systemCall("getsockopt SO_ERROR", host) { getsockopt(descriptor.rawValue, SOL_SOCKET, SO_ERROR, &outcome, &length) }
        if outcome != 0 { throw SystemCallError("connect", host, errno: Errno(rawValue: outcome)) }
    }

    /// Waits for the socket to be ready for `events`; `ETIMEDOUT` (named `call`) at the deadline.
    private func wait(for events: PollEvents, call: String, deadline: ContinuousClock.Instant) throws(SystemCallError) {
        let found = try descriptor.wait(for: events, timeout: ContinuousClock.now.duration(to: deadline))
        if found.isEmpty { throw SystemCallError(call, errno: .timedOut) }
    }
}
