import Foundation
@testable import KVSyncthing
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The pieces of `kvfs mount --syncthing` that need no Syncthing (the machine tests drive the rest).
@Suite("Syncthing scan requests")
struct SyncthingScannerTests {
    @Test func theFolderIsTheDeepestThatHoldsTheSyncDirectory() {
        let folders = #"[{"id":"home","path":"/home/me"},{"id":"sync","path":"/home/me/Sync/"},{"id":"other","path":"/home/me/Syncthing"}]"#
        let found = SyncthingFolder.find(in: Array(folders.utf8), syncDirectory: "/home/me/Sync/kvfs", deviceFolder: "devices/ab")
        #expect(found == SyncthingFolder(id: "sync", syncDirectory: "kvfs", sub: "kvfs/devices/ab"))
        let root = SyncthingFolder.find(in: Array(folders.utf8), syncDirectory: "/home/me/Sync", deviceFolder: "devices/ab")
        #expect(root == SyncthingFolder(id: "sync", syncDirectory: "", sub: "devices/ab"))
        #expect(SyncthingFolder.find(in: Array(folders.utf8), syncDirectory: "/srv/kvfs", deviceFolder: "devices/ab") == nil)
        #expect(SyncthingFolder.find(in: Array("not json".utf8), syncDirectory: "/home/me/Sync", deviceFolder: "devices/ab") == nil)
        // A folder whose fields are not strings is passed over, not the whole answer.
        let odd = #"[{"id":7,"path":"/home/me/Sync"},{"path":"/home"},{"id":"sync","path":"/home/me/Sync"}]"#
        #expect(SyncthingFolder.find(in: Array(odd.utf8), syncDirectory: "/home/me/Sync", deviceFolder: "devices/ab")
                == SyncthingFolder(id: "sync", syncDirectory: "", sub: "devices/ab"))
    }

    @Test func theKeyComesFromConfigXMLOrAKeyFileAndOnlyPlainHTTPIsTaken() throws {
        let temporary = TemporaryFolder("kvfs-scanner")
        defer { temporary.cleanup() }
        let folder = temporary.path
        let config = folder + "/config.xml"
        try #"<configuration><gui enabled="true" tls="false"><address>127.0.0.1:8384</address><apikey>k3y-From-Config</apikey></gui></configuration>"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        #expect(try SyncthingEndpoint.load(url: "http://127.0.0.1:8384", configFile: config).apiKey == "k3y-From-Config")
        try "fromFile\n".write(toFile: folder + "/key", atomically: true, encoding: .utf8)
        #expect(try SyncthingEndpoint.load(url: "http://localhost:8384", keyFile: folder + "/key").apiKey == "fromFile")
        #expect(throws: SyncthingError.self) { try SyncthingEndpoint.load(url: "https://127.0.0.1:8384", keyFile: folder + "/key") }
        #expect(throws: SyncthingError.self) { try SyncthingEndpoint.load(url: "http://127.0.0.1:8384", configFile: folder + "/missing.xml") }
        #expect(throws: SyncthingError.self) { try SyncthingEndpoint(url: "http://127.0.0.1:8384", apiKey: "two words") }
    }

    @Test(.timeLimit(.minutes(1)))
    func aSyncthingThatDoesNotAnswerNeverBlocksARequestAndIsLoggedOnce() throws {
        let silent = try ClosingPort()
        defer { silent.stop() }
        let endpoint = try SyncthingEndpoint(url: "http://127.0.0.1:\(silent.port)", apiKey: "key")
        let messages = Mutex<[String]>([])
        let scanner = SyncthingScanner(endpoint: endpoint, syncDirectory: URL(fileURLWithPath: "/tmp/kvfs-none"), device: "ab") { message in
            messages.withLock { $0.append(message) }
        }
        defer { scanner.stop() }
        let start = Date()
        for _ in 0..<1000 { scanner.requestScan() }
        #expect(Date().timeIntervalSince(start) < 0.5, "1000 requests took \(Date().timeIntervalSince(start)) s")
        // The 1000 requests coalesce into a failing attempt and its retry; one
        // more request after them makes a third. Each attempt is a connection.
        #expect(poll(seconds: 10) { silent.accepted >= 2 }, "attempts seen: \(silent.accepted)")
        scanner.requestScan()
        #expect(poll(seconds: 10) { silent.accepted >= 3 }, "attempts seen: \(silent.accepted)")
        let logged = messages.withLock { $0 }
        #expect(logged.count == 1 && logged[0].contains("does not answer"), "\(logged)")
        #expect(silent.accepted <= 4, "1001 requests made \(silent.accepted) attempts")
    }
}

/// A TCP port on 127.0.0.1 that accepts each connection and closes it
/// unanswered, counting them: a Syncthing that does not answer, whose
/// attempts a test can wait for instead of sleeping.
private final class ClosingPort: Sendable {
    let port: Int
    private let socket: Int32
    private let count = Mutex(0)

    /// How many connections were accepted so far.
    var accepted: Int { count.withLock { $0 } }

    /// Listens on a free port and starts accepting.
    init() throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { [socket] pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && listen(socket, 16) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        guard socket >= 0, bound else { throw POSIXError(.EADDRNOTAVAIL) }
        Thread.detachNewThread { [self] in acceptUntilStopped() }
    }

    private func acceptUntilStopped() {
        while true {
            let connection = accept(socket, nil, nil)
            if connection < 0 { if errno == EINTR { continue } else { return } }
            count.withLock { $0 += 1 }
            close(connection)
        }
    }

    /// Ends the accepting thread and the port.
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }
}
