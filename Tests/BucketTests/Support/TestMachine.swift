import Foundation
@testable import KVBucket
import KVStore
import TestSupport

/// A machine of a bucket test, made by hand: a sync root with the store
/// `default` holding its own device folder, a state directory with that
/// device's id, and its bucket ledger; what kvfs would write, without kvfs.
struct TestMachine {
    let home: URL
    let device = DeviceID.random()
    let sync: BucketSync

    /// The machine `name` in `folder`, syncing with `bucket` through `client` (by default the bucket's).
    init(_ name: String, in folder: TemporaryFolder, bucket: TestBucket, client: S3Client? = nil) throws {
        home = folder.sub(name)
        let state = home.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try Data((device.hex + "\n").utf8).write(to: state.appendingPathComponent("device-id"))
        try FileManager.default.createDirectory(at: home.appendingPathComponent("data/default/devices/\(device.hex)"), withIntermediateDirectories: true)
        try Data("8d1e2a3c-0000-4000-8000-000000000001\n".utf8).write(to: home.appendingPathComponent("data/default/store-id"))
        sync = try BucketSync(client: client ?? bucket.client, location: bucket.location, root: StoreRoot(url: home.appendingPathComponent("data")),
                              ledgerURL: home.appendingPathComponent("ledger.json"), stateDirectory: { _ in state })
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
