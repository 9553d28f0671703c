import Foundation
import LinuxSystem

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
        let deadline = ContinuousClock.now + .seconds(timeout)
        let connection: TCPConnection
        do {
            connection = try TCPConnection.connect(host: host, port: port, deadline: deadline)
        } catch {
            switch error {
            case .unresolved(_, let reason): throw SyncthingError("cannot resolve \(host): \(reason)")
            case .unreachable(let error): throw SyncthingError("cannot connect to \(host):\(port): \(error.errno)")
            }
        }
        defer { connection.close() }
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"  // an IPv6 address in brackets
        var request = "\(method) \(path) HTTP/1.0\r\nHost: \(authority)\r\nContent-Length: 0\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        do {
            try connection.send(all: Array(request.utf8), deadline: deadline)
        } catch {
            throw SyncthingError("cannot send the request: \(error.errno)")
        }
        return try parse(readAll(connection, deadline: deadline))
    }

    private static func readAll(_ connection: TCPConnection, deadline: ContinuousClock.Instant) throws(SyncthingError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count: Int
            do {
                count = try connection.receive(into: &buffer, deadline: deadline)
            } catch {
                throw SyncthingError("no complete response: \(error.errno)")
            }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            guard bytes.count <= maxResponseBytes else { throw SyncthingError("the response is larger than \(maxResponseBytes) bytes") }
        }
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
