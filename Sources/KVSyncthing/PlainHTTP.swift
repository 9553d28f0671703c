import Foundation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// A response of ``PlainHTTP``.
struct HTTPResponse: Sendable {
    /// The status code (200, 404, …).
    var status: Int
    /// The body.
    var body: [UInt8]
}

/// One HTTP/1.0 request over a plain TCP socket, bounded in time and size:
/// all the daemon needs to talk to Syncthing's REST API on the local machine.
///
/// Not URLSession: on Linux that links libcurl into the daemon, and a mount
/// needs nothing of it but this. HTTP/1.0 so that the server closes the
/// connection after one response and never sends it in chunks.
enum PlainHTTP {
    /// The largest response read (Syncthing's folder list is a few KiB a folder).
    static let maxResponseBytes = 8 << 20

    /// Sends `method path` to `host:port` with `headers`, and reads the whole
    /// response; gives up (throws) after `timeout` seconds in all.
    static func send(_ method: String, host: String, port: UInt16, path: String, headers: [String: String],
                     timeout: TimeInterval) throws(SyncthingError) -> HTTPResponse {
        let deadline = Date().addingTimeInterval(timeout)
        let fd = try connect(host: host, port: port, deadline: deadline)
        defer { close(fd) }
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"  // an IPv6 address in brackets
        var request = "\(method) \(path) HTTP/1.0\r\nHost: \(authority)\r\nContent-Length: 0\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        try writeAll(Array(request.utf8), to: fd, deadline: deadline)
        return try parse(readAll(fd, deadline: deadline))
    }

    private static func connect(host: String, port: UInt16, deadline: Date) throws(SyncthingError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SyncthingError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry?.pointee {
            entry = info.ai_next
            let fd = socket(info.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { reason = String(cString: strerror(errno)); continue }
            if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) == 0 || (errno == EINPROGRESS && waitConnected(fd, deadline: deadline)) {
                return fd
            }
            reason = String(cString: strerror(errno))
            close(fd)
        }
        throw SyncthingError("cannot connect to \(host):\(port): \(reason)")
    }

    /// Waits for a non-blocking connect to finish; sets errno when it failed.
    private static func waitConnected(_ fd: Int32, deadline: Date) -> Bool {
        guard wait(fd, for: Int16(POLLOUT), deadline: deadline) else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        errno = error
        return error == 0
    }

    /// Polls `fd` for `events` until the deadline; false (errno ETIMEDOUT) when it passes.
    private static func wait(_ fd: Int32, for events: Int16, deadline: Date) -> Bool {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        // The time left is computed again at each retry after a signal.
        let ready = try? systemCall("poll") { poll(&entry, 1, Int32(max(0, deadline.timeIntervalSinceNow * 1000))) }
        if let ready, ready > 0 { return true }
        errno = ETIMEDOUT
        return false
    }

    private static func writeAll(_ bytes: [UInt8], to fd: Int32, deadline: Date) throws(SyncthingError) {
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try systemCall("send") {
                    bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
            } catch where error.errno == .resourceTemporarilyUnavailable && wait(fd, for: Int16(POLLOUT), deadline: deadline) {
                continue
            } catch {
                throw SyncthingError("cannot send the request: \(reason(error))")
            }
        }
    }

    private static func readAll(_ fd: Int32, deadline: Date) throws(SyncthingError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count: Int
            do {
                count = try systemCall("recv") { recv(fd, &buffer, buffer.count, 0) }
            } catch where error.errno == .resourceTemporarilyUnavailable && wait(fd, for: Int16(POLLIN), deadline: deadline) {
                continue
            } catch {
                throw SyncthingError("no complete response: \(reason(error))")
            }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            guard bytes.count <= maxResponseBytes else { throw SyncthingError("the response is larger than \(maxResponseBytes) bytes") }
        }
    }

    /// Why a send or recv failed: a wait for the socket that ran out is a time-out.
    private static func reason(_ error: SystemCallError) -> String {
        error.errno == .resourceTemporarilyUnavailable ? String(cString: strerror(ETIMEDOUT)) : error.errno.description
    }

    /// Splits `HTTP/1.x NNN …\r\n headers \r\n\r\n body`.
    private static func parse(_ bytes: [UInt8]) throws(SyncthingError) -> HTTPResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw SyncthingError("not an HTTP response")
        }
        let statusLine = String(decoding: bytes[..<(bytes.firstIndex(of: 13) ?? end)], as: UTF8.self).split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/"), let status = Int(statusLine[1]) else {
            throw SyncthingError("not an HTTP response")
        }
        return HTTPResponse(status: status, body: Array(bytes[(end + 4)...]))
    }
}
