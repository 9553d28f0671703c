import Foundation
@testable import KVBucket
import TestSupport
import Testing

/// What kvfs relies on of an S3-compatible bucket (issue 40 item 9), against
/// moto's server on 127.0.0.1, or a real provider named by `KVFS_TEST_BUCKET`
/// (docs/buckets.md § Checking a provider).
@Suite("The S3 contract kvfs relies on", .enabled(if: TestBucket.available, "moto_server is not installed (mount-scripts/install-deps.sh installs it) and KVFS_TEST_BUCKET names no bucket"))
struct ContractTests {
    @Test("a create-only PUT (If-None-Match: *) of a name that is there gets 412, and the first object stays")
    func createOnly() throws {
        try withTestBucket { bucket in
            let key = bucket.key("once")
            let etag = try bucket.client.put(key, Array("first".utf8), condition: .absent)
            #expect(etag != nil)
            #expect(throws: S3Error.preconditionFailed) { try bucket.client.put(key, Array("second".utf8), condition: .absent) }
            #expect(try bucket.client.get(key) == S3Client.Object(body: Array("first".utf8), etag: etag))
        }
    }

    @Test("a PUT with If-Match on the object's ETag replaces it; on an older ETag it gets 412, on a missing object 404")
    func ifMatch() throws {
        try withTestBucket { bucket in
            let key = bucket.key("head")
            let first = try #require(try bucket.client.put(key, Array("1".utf8), condition: .absent))
            let second = try #require(try bucket.client.put(key, Array("2".utf8), condition: .matching(first)))
            #expect(second != first)
            #expect(throws: S3Error.preconditionFailed) { try bucket.client.put(key, Array("3".utf8), condition: .matching(first)) }
            #expect(try bucket.client.get(key).body == Array("2".utf8))
            // As AWS documents it: If-Match on a name with no object is 404 NoSuchKey.
            #expect(throws: S3Error.notFound(code: "NoSuchKey")) { try bucket.client.put(bucket.key("absent"), [1], condition: .matching(first)) }
        }
    }

    @Test("ListObjectsV2 pages with MaxKeys=2: 2, 2 and 1 keys, in order, the last page without a token")
    func listingPages() throws {
        try withTestBucket { bucket in
            let names = ["a", "b", "c", "d", "e"]
            for name in names { try bucket.client.put(bucket.key("list/\(name)"), Array(name.utf8)) }
            try bucket.client.put(bucket.key("other"), [0])
            var pages: [[String]] = []
            var token: String?
            repeat {
                let page = try bucket.client.list(prefix: bucket.key("list/"), maxKeys: 2, after: token)
                pages.append(page.objects.map { String($0.key.dropFirst(bucket.key("list/").count)) })
                token = page.nextToken
            } while token != nil && pages.count < 10
            #expect(pages == [["a", "b"], ["c", "d"], ["e"]])
            #expect(try bucket.client.listAll(prefix: bucket.key("list/")).map(\.size) == [1, 1, 1, 1, 1])
        }
    }

    @Test("a ranged GET gives exactly the bytes asked for; a range past the end is refused, never taken short")
    func rangedGet() throws {
        try withTestBucket { bucket in
            let key = bucket.key("digits")
            try bucket.client.put(key, Array("0123456789".utf8))
            #expect(try bucket.client.get(key, range: 2..<5).body == Array("234".utf8))
            #expect(try bucket.client.get(key, range: 9..<10).body == Array("9".utf8))
            #expect(throws: S3Error.self) { try bucket.client.get(key, range: 8..<12) }
            #expect(try bucket.client.head(key).size == 10)
        }
    }

    @Test("a missing object is 404 NoSuchKey to GET and HEAD; DELETE of it succeeds; DeleteObjects removes what it names")
    func missingAndDeleted() throws {
        try withTestBucket { bucket in
            #expect(throws: S3Error.notFound(code: "NoSuchKey")) { try bucket.client.get(bucket.key("nothing")) }
            #expect { try bucket.client.head(bucket.key("nothing")) } throws: { ($0 as? S3Error).map { if case .notFound = $0 { true } else { false } } ?? false }
            try bucket.client.delete(bucket.key("nothing"))
            for name in ["x", "y", "z"] { try bucket.client.put(bucket.key("gone/\(name)"), [1]) }
            #expect(try bucket.client.delete(keys: ["x", "y", "z"].map { bucket.key("gone/\($0)") }) == [])
            #expect(try bucket.client.listAll(prefix: bucket.key("gone/")) == [])
        }
    }

    @Test("no multipart upload is left under the prefix (kvfs starts none), and listing them works")
    func multipartUploads() throws {
        try withTestBucket { bucket in
            let uploads = try bucket.client.multipartUploads(prefix: bucket.location.prefix + "/")
            #expect(uploads == [])
        }
    }

    @Test("the probe of kvfs bucket add takes a bucket that honours conditional writes, and leaves nothing behind")
    func probeTakes() throws {
        try withTestBucket { bucket in
            try ConditionalWriteProbe.check(bucket.client, bucket.location)
            #expect(try bucket.client.listAll(prefix: bucket.location.prefix + "/") == [])
        }
    }

    @Test("a port nobody listens on is a network error, which is worth a retry")
    func networkError() throws {
        let client = S3Client(endpoint: URL(string: "http://127.0.0.1:\(ChildProcess.freePort())")!, bucket: "none", region: "us-east-1",
                              credentials: Credentials(accessKeyID: "x", secretAccessKey: "y"), timeout: 5)
        #expect { try client.get("key") } throws: { error in
            guard let error = error as? S3Error, case .network = error else { return false }
            return error.isTransient
        }
    }
}
