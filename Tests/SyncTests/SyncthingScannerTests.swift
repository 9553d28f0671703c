import Foundation
@testable import KVSyncthing
import Synchronization
import Testing

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
        let endpoint = try SyncthingEndpoint(url: "http://127.0.0.1:\(ChildProcess.freePort())", apiKey: "key")
        let messages = Mutex<[String]>([])
        let scanner = SyncthingScanner(endpoint: endpoint, syncDirectory: URL(fileURLWithPath: "/tmp/kvfs-none"), device: "ab") { message in
            messages.withLock { $0.append(message) }
        }
        defer { scanner.stop() }
        let start = Date()
        for _ in 0..<1000 { scanner.requestScan() }
        #expect(Date().timeIntervalSince(start) < 0.5, "1000 requests took \(Date().timeIntervalSince(start)) s")
        Thread.sleep(forTimeInterval: SyncthingScanner.retryDelay * 2.5)  // two or three attempts, coalesced
        scanner.requestScan()
        Thread.sleep(forTimeInterval: 0.2)
        let logged = messages.withLock { $0 }
        #expect(logged.count == 1 && logged[0].contains("does not answer"), "\(logged)")
    }
}
