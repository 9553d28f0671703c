import Foundation
import KVBucket
import TestSupport

/// A bucket for one test: a fresh bucket in moto's emulator on 127.0.0.1, or,
/// when `KVFS_TEST_BUCKET` names one (`s3://BUCKET[/PREFIX]`, with credentials,
/// region and endpoint from the AWS chain), a fresh prefix in that real bucket,
/// emptied afterwards (docs/buckets.md § Checking a provider).
final class TestBucket {
    let client: S3Client
    let location: BucketLocation
    let moto: MotoServer?
    let folder = TemporaryFolder("kvfs-bucket-test")
    /// The settings `kvfs bucket add` would keep for this bucket, and the environment that reaches it.
    let settings: BucketSettings
    let environment: [String: String]

    /// Whether the suite can run here: a real bucket is named, or moto is installed.
    static let available = ProcessInfo.processInfo.environment["KVFS_TEST_BUCKET"] != nil || MotoServer.program != nil

    init() throws {
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        if let named = ProcessInfo.processInfo.environment["KVFS_TEST_BUCKET"] {
            moto = nil
            let base = try BucketLocation(parsing: named)
            location = try BucketLocation(parsing: base.description + "/kvfs-test-\(random)")
            settings = BucketSettings(location: location)
            environment = [:]
        } else {
            let moto = try MotoServer(logIn: folder.path)
            self.moto = moto
            try moto.createBucket("kvfs-test")
            location = try BucketLocation(parsing: "s3://kvfs-test/\(random)")
            settings = BucketSettings(location: location, endpoint: moto.endpoint, region: "us-east-1")
            environment = ["AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"]
        }
        client = try settings.client(environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    }

    /// The key of `name` under the test's prefix.
    func key(_ name: String) -> String { location.key(name) }

    /// Empties the test's prefix (in a real bucket), stops the emulator, removes the folder.
    func close() {
        if moto == nil, let objects = try? client.listAll(prefix: location.prefix + "/") {
            _ = try? client.delete(keys: objects.map(\.key))
        }
        moto?.stop()
        folder.cleanup()
    }
}

/// Runs `body` with a fresh ``TestBucket``, closed afterwards whatever happens.
func withTestBucket(_ body: (TestBucket) throws -> Void) throws {
    let bucket = try TestBucket()
    defer { bucket.close() }
    try body(bucket)
}
