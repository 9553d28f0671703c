import Foundation
@testable import KVBucket
import TestSupport
import Testing

/// `kvfs bucket add`'s probe refuses a provider that ignores conditional
/// writes or does not implement them, with a one-line reason.
@Suite("The probe refuses what does not honour conditional writes")
struct ProbeTests {
    func client(_ provider: FakeProvider) -> S3Client {
        S3Client(endpoint: URL(string: provider.endpoint)!, bucket: "bucket", region: "us-east-1",
                 credentials: Credentials(accessKeyID: "x", secretAccessKey: "y"), timeout: 10)
    }

    @Test("a provider that takes a second create-only write is refused: it ignores conditional writes")
    func ignoring() throws {
        let folder = TemporaryFolder("kvfs-probe-test")
        defer { folder.cleanup() }
        let provider = try FakeProvider(.ignoring, logIn: folder.path)
        let location = try BucketLocation(parsing: "s3://bucket/kvfs")
        #expect(throws: BucketError.unsupported("s3://bucket/kvfs ignores conditional writes (a second create-only write (If-None-Match: *) of one name succeeded): kvfs needs them to never overwrite a record")) {
            try ConditionalWriteProbe.check(client(provider), location)
        }
    }

    @Test("a provider that answers a conditional write 501 NotImplemented is refused, saying so")
    func unimplemented() throws {
        let folder = TemporaryFolder("kvfs-probe-test")
        defer { folder.cleanup() }
        let provider = try FakeProvider(.unimplemented, logIn: folder.path)
        let location = try BucketLocation(parsing: "s3://bucket")
        #expect(throws: BucketError.unsupported("s3://bucket refuses create-only writes (If-None-Match: *, 501 NotImplemented): kvfs needs them to never overwrite a record")) {
            try ConditionalWriteProbe.check(client(provider), location)
        }
    }
}
