import Foundation
@testable import KVBucket
import KVStore
import TestSupport

/// A machine of a bucket test, made by hand: a sync root with the store
/// `default` holding its own device folder, a state directory with that
/// device's id, and its bucket ledger; what kvfs would write, without kvfs.
struct TestMachine {
    let home: URL
    let device: DeviceID
    let sync: BucketSync

    /// The machine `name` in `folder`, syncing with `bucket` through `client` (by default the bucket's), collecting
    /// its objects `collectionMargin` seconds after its head stopped naming them.
    init(_ name: String, in folder: TemporaryFolder, bucket: TestBucket, client: S3Client? = nil,
         collectionMargin: TimeInterval = BucketSync.collectionMargin) throws {
        home = folder.sub(name)
        device = DeviceID.random()
        let state = home.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try Data((device.hex + "\n").utf8).write(to: state.appendingPathComponent("device-id"))
        try FileManager.default.createDirectory(at: home.appendingPathComponent("data/default/devices/\(device.hex)"), withIntermediateDirectories: true)
        try Data("8d1e2a3c-0000-4000-8000-000000000001\n".utf8).write(to: home.appendingPathComponent("data/default/store-id"))
        sync = try Self.synchronizer(home: home, bucket: bucket, client: client, collectionMargin: collectionMargin)
    }

    /// `machine` started again: a new synchronizer over its files and ledger, as a new `kvfs sync` process.
    init(restarting machine: TestMachine, bucket: TestBucket, client: S3Client? = nil,
         collectionMargin: TimeInterval = BucketSync.collectionMargin) throws {
        home = machine.home
        device = machine.device
        sync = try Self.synchronizer(home: home, bucket: bucket, client: client, collectionMargin: collectionMargin)
    }

    private static func synchronizer(home: URL, bucket: TestBucket, client: S3Client?, collectionMargin: TimeInterval) throws -> BucketSync {
        let state = home.appendingPathComponent("state")
        return try BucketSync(client: client ?? bucket.client, location: bucket.location, root: StoreRoot(url: home.appendingPathComponent("data")),
                              ledgerURL: home.appendingPathComponent("ledger.json"), stateDirectory: { _ in state },
                              collectionMargin: collectionMargin)
    }

    /// The file `name` of `device`'s folder (this machine's own by default) in this machine's root.
    func file(_ name: String, of device: DeviceID? = nil) -> URL {
        home.appendingPathComponent("data/default/devices/\((device ?? self.device).hex)/\(name)")
    }

    /// The first journal segment's name.
    static let segment = "journal-0000000000000001.log"

    /// Appends `text` to this machine's own `name`.
    func append(_ text: String, to name: String = segment) throws {
        let handle = try FileHandle(forWritingTo: file(name).creatingIfMissing())
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// The text of `name` of `device`'s folder here, or nil when there is no such file.
    func text(_ name: String = segment, of device: DeviceID) -> String? {
        (try? Data(contentsOf: file(name, of: device))).map { String(decoding: $0, as: UTF8.self) }
    }
}

private extension URL {
    func creatingIfMissing() -> URL {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        return self
    }
}
