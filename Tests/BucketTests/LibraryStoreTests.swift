import Foundation
@testable import KVBucket
import KVStore
import TestSupport
import Testing

/// Store and forward for a library-only program (issue 40 item 2): two
/// machines, each with its own sync root and state, never open together; the
/// store opened through KVStore's `DeviceStore`, as a Swift program does, and
/// carried by `BucketSync` rounds through moto.
@Suite("A bucket carries a library-only program's store", .serialized,
       .enabled(if: MotoServer.program != nil, "moto_server is not installed (mount-scripts/install-deps.sh installs it)"))
struct LibraryStoreTests {
    /// One machine: its sync root, its state directories (one per store folder), its ledger.
    struct Machine {
        let home: URL
        let name: String
        var root: StoreRoot { StoreRoot(url: home.appendingPathComponent("data")) }

        /// The store `com.example.app` of this machine, opened as a program opens it.
        func open() throws -> DeviceStore {
            try DeviceStore(syncDirectory: root.folder(of: try StoreIdentifier("com.example.app")),
                            stateDirectory: home.appendingPathComponent("state/com.example.app"), deviceName: name, warn: { _ in })
        }

        /// Opens the store, runs `body` with it (to write or to read), and closes it.
        func write(_ body: (DeviceStore) throws -> Void) throws {
            let store = try open()
            defer { store.close() }
            try body(store)
        }

        /// One round with `bucket`, by a synchronizer started for it, collecting with `margin`.
        func sync(_ bucket: TestBucket, margin: TimeInterval = BucketSync.collectionMargin) throws {
            let home = home
            try BucketSync(client: bucket.client, location: bucket.location, root: root, ledgerURL: home.appendingPathComponent("ledger.json"),
                           stateDirectory: { home.appendingPathComponent("state/" + $0.lastPathComponent) },
                           collectionMargin: margin).round()
        }
    }

    /// Runs `body` with a bucket in moto and two machines, laptop and desktop (with moto only: the rounds are checked
    /// against what it holds).
    func withMachines(_ body: (TestBucket, Machine, Machine) throws -> Void) throws {
        guard ProcessInfo.processInfo.environment["KVFS_TEST_BUCKET"] == nil else { return }
        try withTestBucket { bucket in
            try body(bucket, Machine(home: bucket.folder.sub("laptop"), name: "laptop"), Machine(home: bucket.folder.sub("desktop"), name: "desktop"))
        }
    }

    @Test("laptop sets, overwrites and removes, then syncs; desktop, syncing later, has every value, the removal and the history; desktop's writes come back")
    func storeAndForward() throws {
        try withMachines { bucket, laptop, desktop in
            try laptop.write { store in
                try store.set(.string("dark"), forKey: "theme")
                try store.set(.integer(1), forKey: "count")
                try store.set(.integer(2), forKey: "count")
                try store.set(.string("soon gone"), forKey: "draft")
                try store.removeValue(forKey: "draft")
            }
            try laptop.sync(bucket)

            try desktop.sync(bucket)
            try desktop.write { store in
                #expect(store.value(forKey: "theme") == .string("dark"))
                #expect(store.value(forKey: "count") == .integer(2))
                #expect(store.value(forKey: "draft") == nil)
                #expect(store.history(forKey: "count", withDelivery: false).map { "\($0.deviceName) \($0.isCurrent)" } == ["laptop false", "laptop true"])
                #expect(store.history(forKey: "draft", withDelivery: false).map(\.isRemoval) == [false, true])
                try store.set(.string("light"), forKey: "theme")
            }
            try desktop.sync(bucket)

            try laptop.sync(bucket)
            let store = try laptop.open()
            defer { store.close() }
            #expect(store.value(forKey: "theme") == .string("light"))
            #expect(store.value(forKey: "draft") == nil)
        }
    }

    @Test("laptop compacts its journal and collects the old segment's objects; desktop, behind, reads the snapshot: the removal stays, every value is there")
    func behindTheMargin() throws {
        try withMachines { bucket, laptop, desktop in
            try laptop.write { store in
                try store.set(.string("kept"), forKey: "keep")
                try store.set(.string("soon gone"), forKey: "gone")
            }
            try laptop.sync(bucket, margin: 0)
            try desktop.sync(bucket)
            try laptop.write { store in
                try store.removeValue(forKey: "gone")
                // Past 1 MiB of segment: a write then compacts into a snapshot and a new segment (docs/format.md § Compaction).
                for round in 0..<14 { try store.set(.data(Data(repeating: UInt8(round), count: 100_000)), forKey: "big") }
            }
            let folder = laptop.root.folder(of: try StoreIdentifier("com.example.app")).appendingPathComponent("devices")
            let device = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(device).path)
            #expect(files.contains { $0.hasPrefix("snapshot-") } && !files.contains("journal-0000000000000001.log"), "compacted: \(files)")
            let machine = try #require(try String(contentsOf: laptop.home.appendingPathComponent("ledger.json"), encoding: .utf8)
                .firstMatch(of: /"machine":"([0-9a-f]{32})"/)?.1)
            let objects = { try bucket.client.listAll(prefix: bucket.key("objects/\(machine)/")).count }
            try laptop.sync(bucket, margin: 0)
            let beforeCollection = try objects()
            try laptop.sync(bucket, margin: 0)
            #expect(try objects() < beforeCollection, "the old segment's objects were collected")

            try desktop.sync(bucket)
            let store = try desktop.open()
            defer { store.close() }
            #expect(store.value(forKey: "keep") == .string("kept"))
            #expect(store.value(forKey: "gone") == nil)
            #expect(store.value(forKey: "big") == .data(Data(repeating: 13, count: 100_000)))
        }
    }
}
