import Foundation
@testable import KVBucket
import KVStore
import TestSupport
import Testing

/// The bucket sync's rounds through the library, against moto's server, whose
/// request log gives what each round cost: appends as appends, a file cut back
/// or removed, an idle round's requests, and the faults that must cost no data.
@Suite("Bucket sync rounds", .enabled(if: MotoServer.program != nil, "moto_server is not installed (mount-scripts/install-deps.sh installs it)"))
struct BucketSyncLibraryTests {
    /// Runs `body` with a bucket in moto and two machines syncing with it.
    func withMachines(_ body: (TestBucket, TestMachine, TestMachine) throws -> Void) throws {
        guard ProcessInfo.processInfo.environment["KVFS_TEST_BUCKET"] == nil else { return }  // counts need moto's log
        try withTestBucket { bucket in
            let laptop = try TestMachine("laptop", in: bucket.folder, bucket: bucket)
            let desktop = try TestMachine("desktop", in: bucket.folder, bucket: bucket)
            try body(bucket, laptop, desktop)
        }
    }

    /// The requests moto logs while `body` runs, each as `METHOD what` with the test's prefix taken out of its path.
    func requests(_ bucket: TestBucket, _ body: () throws -> Void) rethrows -> [String] {
        let before = bucket.moto!.requests().count
        try body()
        let prefix = "/\(bucket.location.bucket)/\(bucket.location.prefix)/"
        return bucket.moto!.requests().dropFirst(before).map { $0.replacingOccurrences(of: prefix, with: "") }
    }

    @Test("a segment's new bytes go up as one object and the head, and come down as an append; an idle round is one GET of each peer's head")
    func appendsAndIdleRounds() throws {
        try withMachines { bucket, laptop, desktop in
            try laptop.append("first record ")
            try laptop.sync.round()
            try desktop.sync.round()
            #expect(desktop.text(of: laptop.device) == "first record ")
            try laptop.append("second")
            let upload = try requests(bucket) { try laptop.sync.round() }
            // Desktop joined after laptop's synchronizer listed the heads: laptop reads its head from the next listing on
            // (at its next start, or a day later: BucketSync.listingInterval).
            #expect(upload.count == 2 && upload[0].hasPrefix("PUT objects/\(laptop.sync.machine)/") && upload[1] == "PUT heads/\(laptop.sync.machine)")
            let download = try requests(bucket) { try desktop.sync.round() }
            #expect(download.count == 2 && download[0] == "GET heads/\(laptop.sync.machine)" && download[1].hasPrefix("GET objects/\(laptop.sync.machine)/"))
            #expect(desktop.text(of: laptop.device) == "first record second")
            let counted = bucket.client.counter.total
            let idle = try requests(bucket) {
                for _ in 0..<5 { try desktop.sync.round() }
            }
            #expect(idle == Array(repeating: "GET heads/\(laptop.sync.machine)", count: 5), "an idle round: no PUT, no LIST, one GET a peer")
            #expect(bucket.client.counter.total.merging(counted) { $0 - $1 }.filter { $0.value != 0 } == ["GET": 5], "the client counts as moto does")
        }
    }

    @Test("a progress.json whose heartbeat alone moved is not uploaded again; one that says more is")
    func heartbeat() throws {
        try withMachines { bucket, laptop, _ in
            func progress(at: String, own: String) throws {
                try Data("{\"at\":\"\(at)\",\"own\":\"\(own)\",\"read\":{}}".utf8).write(to: laptop.file("progress.json"))
            }
            try progress(at: "100", own: "5")
            try laptop.sync.round()
            try progress(at: "200", own: "5")
            #expect(try requests(bucket) { try laptop.sync.round() } == [], "an idle hour's heartbeats upload nothing")
            try progress(at: "300", own: "6")
            let upload = try requests(bucket) { try laptop.sync.round() }
            #expect(upload.count == 2 && upload[0].hasPrefix("PUT objects/") && upload[1].hasPrefix("PUT heads/"))
        }
    }

    @Test("a segment its writer cut back is uploaded again whole, and replaces the copy; a file its writer removed is removed")
    func cutBackAndRemoved() throws {
        try withMachines { bucket, laptop, desktop in
            try laptop.append("abc, a torn tail")
            try laptop.append("{\"name\":\"laptop\"}", to: "device.json")
            try laptop.sync.round()
            try desktop.sync.round()
            #expect(desktop.text("device.json", of: laptop.device) == "{\"name\":\"laptop\"}")
            try Data("abc, then more".utf8).write(to: laptop.file(TestMachine.segment))
            try FileManager.default.removeItem(at: laptop.file("device.json"))
            try laptop.sync.round()
            try desktop.sync.round()
            #expect(desktop.text(of: laptop.device) == "abc, then more")
            #expect(desktop.text("device.json", of: laptop.device) == nil)
        }
    }

    @Test("an object whose bytes are not the ones its name says is refused before a byte is written; once right, the round converges")
    func wrongBytes() throws {
        try withMachines { bucket, laptop, desktop in
            try laptop.append("the real record")
            try laptop.sync.round()
            let objects = try bucket.client.listAll(prefix: bucket.key("objects/\(laptop.sync.machine)/"))
            let segmentObject = try #require(objects.first { $0.size == "the real record".utf8.count })
            try bucket.client.put(segmentObject.key, Array("the fake record".utf8))
            #expect(throws: BucketError.self) { try desktop.sync.round() }
            #expect(desktop.text(of: laptop.device) == nil)
            try bucket.client.put(segmentObject.key, Array("the real record".utf8))
            try desktop.sync.round()
            #expect(desktop.text(of: laptop.device) == "the real record")
        }
    }

    @Test("a head older than the one read (a rollback) is refused, and nothing of it applied")
    func rollback() throws {
        try withMachines { bucket, laptop, desktop in
            try laptop.append("one ")
            try laptop.sync.round()
            let old = try bucket.client.get(bucket.key("heads/\(laptop.sync.machine)")).body
            try laptop.append("two")
            try laptop.sync.round()
            try desktop.sync.round()
            try bucket.client.put(bucket.key("heads/\(laptop.sync.machine)"), old)
            #expect { try desktop.sync.round() } throws: { "\($0)".contains("rolled it back") }
            #expect(desktop.text(of: laptop.device) == "one two")
        }
    }

    @Test("a head write whose answer was lost is recognised as this machine's own on the 412 that follows, not as a clone")
    func lostHeadAnswer() throws {
        try withMachines { bucket, laptop, desktop in
            try laptop.append("one ")
            try laptop.sync.round()
            let ledger = try Data(contentsOf: laptop.home.appendingPathComponent("ledger.json"))
            try laptop.append("two")
            try laptop.sync.round()
            // As if the second round's head PUT had landed but its answer never came: the ledger is the first round's.
            try ledger.write(to: laptop.home.appendingPathComponent("ledger.json"))
            let again = try TestMachine(restarting: laptop, bucket: bucket).sync
            try again.round()
            try laptop.append(" three")
            try again.round()
            try desktop.sync.round()
            #expect(desktop.text(of: laptop.device) == "one two three")
        }
    }

    @Test("a head naming a path outside a device folder, this machine's own folder, or a file no store has, has none of those written")
    func hostileHead() throws {
        try withMachines { bucket, laptop, _ in
            let fresh = try TestMachine("fresh", in: bucket.folder, bucket: bucket)
            try fresh.append("fresh's own")
            let machine = String(repeating: "ab", count: 16)
            let bytes = Array("planted".utf8)
            let object = SignatureV4.sha256Hex(bytes)
            try bucket.client.put(bucket.key("objects/\(machine)/\(object)"), bytes)
            let chunk = "[{\"length\":\(bytes.count),\"object\":\"\(object)\"}]"
            let paths = ["default/devices/\(fresh.device.hex)/\(TestMachine.segment)", "../escaped", "default/../../escaped",
                         "default/devices/\(laptop.device.hex)/not-a-store-file", "default/devices/\(laptop.device.hex)/.hidden",
                         "default/devices/\(laptop.device.hex)/\(TestMachine.segment)"]
            let files = paths.map { "\"\($0)\":\(chunk)" }.joined(separator: ",")
            try bucket.client.put(bucket.key("heads/\(machine)"), Array("{\"files\":{\(files)},\"format\":1,\"machine\":\"\(machine)\",\"sequence\":1}".utf8))
            try fresh.sync.round()
            #expect(fresh.text(of: fresh.device) == "fresh's own")
            #expect(!FileManager.default.fileExists(atPath: fresh.home.path + "/escaped"))
            #expect(!FileManager.default.fileExists(atPath: bucket.folder.path + "/escaped"))
            #expect(fresh.text("not-a-store-file", of: laptop.device) == nil)
            #expect(fresh.text(".hidden", of: laptop.device) == nil)
            #expect(fresh.text(of: laptop.device) == "planted", "the one path a head may name was written")
        }
    }
}
