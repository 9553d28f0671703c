import Foundation
@testable import KVBucket
import TestSupport
import Testing

/// Issue 40 item 7: only the owner deletes its objects, only those its head
/// no longer names, and only past a margin; a reader that comes later reads
/// what the head names now. Here the margin is 0 s.
@Suite("Objects no head names are collected past the margin", .serialized,
       .enabled(if: MotoServer.program != nil, "moto_server is not installed (mount-scripts/install-deps.sh installs it)"))
struct CollectionTests {
    /// The names of `machine`'s objects in the bucket.
    func objects(_ bucket: TestBucket, of machine: TestMachine) throws -> Set<String> {
        let prefix = bucket.key("objects/\(machine.sync.machine)/")
        return Set(try bucket.client.listAll(prefix: prefix).map { String($0.key.dropFirst(prefix.count)) })
    }

    @Test("a replaced file's old object and a removed segment's objects go at the round after, and a reader behind converges")
    func collected() throws {
        guard ProcessInfo.processInfo.environment["KVFS_TEST_BUCKET"] == nil else { return }
        try withTestBucket { bucket in
            let laptop = try TestMachine("laptop", in: bucket.folder, bucket: bucket, collectionMargin: 0)
            try laptop.append("{\"name\":\"one\"}", to: "device.json")
            try laptop.append("old segment", to: "journal-0000000000000001.log")
            try laptop.sync.round()
            let first = try objects(bucket, of: laptop)
            #expect(first.count == 3, "store-id, device.json and the segment")
            try Data("{\"name\":\"two\"}".utf8).write(to: laptop.file("device.json"))
            try FileManager.default.removeItem(at: laptop.file("journal-0000000000000001.log"))
            try laptop.append("new segment", to: "journal-0000000000000002.log")
            try laptop.sync.round()
            #expect(try objects(bucket, of: laptop).count == 5, "the head just stopped naming two: they stay this round")
            try laptop.sync.round()
            let left = try objects(bucket, of: laptop)
            #expect(left.count == 3 && left.intersection(first).count == 1, "only store-id's object is left of the first three")
            let desktop = try TestMachine("desktop", in: bucket.folder, bucket: bucket)
            try desktop.sync.round()
            #expect(desktop.text("device.json", of: laptop.device) == "{\"name\":\"two\"}")
            #expect(desktop.text("journal-0000000000000002.log", of: laptop.device) == "new segment")
            #expect(desktop.text("journal-0000000000000001.log", of: laptop.device) == nil)
        }
    }

    @Test("with the default margin nothing is deleted yet")
    func margin() throws {
        guard ProcessInfo.processInfo.environment["KVFS_TEST_BUCKET"] == nil else { return }
        try withTestBucket { bucket in
            let laptop = try TestMachine("laptop", in: bucket.folder, bucket: bucket)
            try laptop.append("one", to: "device.json")
            try laptop.sync.round()
            try Data("two".utf8).write(to: laptop.file("device.json"))
            try laptop.sync.round()
            try laptop.sync.round()
            #expect(try objects(bucket, of: laptop).count == 3)
        }
    }

    @Test("a DeleteObjects answered 200 without deleting: the listing at the next start finds the object, and it goes")
    func deleteIgnored() throws {
        guard ProcessInfo.processInfo.environment["KVFS_TEST_BUCKET"] == nil else { return }
        try withTestBucket { bucket in
            let proxy = try FaultProxy(to: bucket.moto!.endpoint, in: bucket.folder.path)
            let client = S3Client(endpoint: URL(string: proxy.endpoint)!, bucket: bucket.location.bucket, region: "us-east-1",
                                  credentials: Credentials(accessKeyID: "testing", secretAccessKey: "testing"))
            let laptop = try TestMachine("laptop", in: bucket.folder, bucket: bucket, client: client, collectionMargin: 0)
            try laptop.append("one", to: "device.json")
            try laptop.sync.round()
            try Data("two".utf8).write(to: laptop.file("device.json"))
            try laptop.sync.round()
            try proxy.inject(.deleteIgnored, count: 1, method: "POST")
            try laptop.sync.round()
            #expect(try objects(bucket, of: laptop).count == 3, "the delete was not done")
            let restarted = try TestMachine(restarting: laptop, bucket: bucket, client: client, collectionMargin: 0)
            try restarted.sync.round()
            try restarted.sync.round()
            #expect(try objects(bucket, of: laptop).count == 2)
        }
    }
}
