import Foundation
@testable import KVBucket
import TestSupport
import Testing

/// The signer end to end: moto checking every request's SigV4 signature
/// against its IAM's keys, as AWS does, so that nothing URLSession adds or
/// changes on the way breaks a signed header, and a key with a space is
/// encoded as AWS expects. moto checks requests with a query string (a
/// listing, DeleteObjects) and keys with a `+` against a path it decoded,
/// which fails boto3's own requests too; those are left to the published
/// vectors.
@Suite("Signed requests, checked by the emulator",
       .enabled(if: MotoServer.program != nil, "moto_server is not installed (mount-scripts/install-deps.sh installs it)"))
struct SignedRequestTests {
    @Test("create-only and If-Match PUTs, a ranged GET, HEAD and DELETE pass with the key; a wrong secret is 403 SignatureDoesNotMatch")
    func signatures() throws {
        let folder = TemporaryFolder("kvfs-signed-test")
        defer { folder.cleanup() }
        // The unsigned requests: the one that finds the emulator answering, four to make a user, one to make the bucket.
        let moto = try MotoServer(logIn: folder.path, unsignedRequests: 6)
        defer { moto.stop() }
        let user = try moto.createUser()
        try moto.createBucket("kvfs-signed")
        func client(secret: String) -> S3Client {
            S3Client(endpoint: URL(string: moto.endpoint)!, bucket: "kvfs-signed", region: "us-east-1",
                     credentials: Credentials(accessKeyID: user.id, secretAccessKey: secret))
        }
        let signed = client(secret: user.secret)
        let etag = try #require(try signed.put("dir/a b", Array("0123456789".utf8), condition: .absent))
        #expect(throws: S3Error.preconditionFailed) { try signed.put("dir/a b", [1], condition: .absent) }
        try signed.put("dir/a b", Array("abcdefghij".utf8), condition: .matching(etag))
        #expect(try signed.get("dir/a b", range: 2..<5).body == Array("cde".utf8))
        #expect(try signed.head("dir/a b").size == 10)
        try signed.delete("dir/a b")
        #expect { try client(secret: "wrong").put("other", [1]) } throws: { error in
            guard case .refused(403, "SignatureDoesNotMatch", _) = error as? S3Error else { return false }
            return true
        }
    }
}
