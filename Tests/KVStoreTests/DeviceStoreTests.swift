import Foundation
import Testing
@testable import KVStore

@Suite("Device store")
struct DeviceStoreTests {
    @Test func writesSurviveReopen() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        try store.set(.integer(5), forKey: "volume")
        try store.setFileContent(bytes("dark\n"), forKey: "theme")
        try store.rename("theme", to: "look")
        try store.set(.bool(true), forKey: "gone")
        try store.removeValue(forKey: "gone")
        store.close()
        let again = try openStore(root, device: "a")
        defer { again.close() }
        #expect(again.values == ["volume": .integer(5), "look": .string("dark")])
        #expect(again.usage == QuotaUsage(keys: 2, bytes: 2 + 5))
    }

    @Test("a state directory is one device however many stores open it; it has one mount at a time")
    func oneDevicePerStateDirectory() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        let again = try openStore(root, device: "a")
        #expect(again.deviceID == store.deviceID)
        try store.set(.integer(1), forKey: "k")
        again.refresh()
        #expect(again.value(forKey: "k") == .integer(1))
        let mount = try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), owner: "mount /m", warn: { _ in })
        #expect(mount.deviceID == store.deviceID)
        do {
            _ = try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), owner: "mount /m2", warn: { _ in })
            Issue.record("a second mount of one state directory was let in")
        } catch {
            #expect("\(error)".contains("in use by pid \(getpid()) mount /m"), "\(error)")
        }
        for opened in [mount, again, store] { opened.close() }
        try openStore(root, device: "a").close()
    }

    @Test("a compaction by another process of the device is followed: not taken for a vanished folder, nor compacted again")
    func anotherProcesssCompactionIsFollowed() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let warnings = Warnings()
        let open = { (warn: @escaping @Sendable (String) -> Void) in
            try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), deviceName: "a", warn: warn)
        }
        let first = try open(warnings.add)
        let second = try open { _ in }
        try first.set(.integer(1), forKey: "k")
        second.refresh()
        second.compact()
        first.refresh()
        #expect(warnings.all.isEmpty, "\(warnings.all)")
        let folder = root.sub("sync/devices/\(first.deviceID.hex)").path
        let files = { try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("journal-") || $0.hasPrefix("snapshot-") }.sorted() }
        #expect(try files() == [DeviceFolder.segmentName(2), DeviceFolder.snapshotName(2)])
        try first.set(.integer(2), forKey: "k")
        second.refresh()
        #expect(second.value(forKey: "k") == .integer(2))
        #expect(try files() == [DeviceFolder.segmentName(2), DeviceFolder.snapshotName(2)], "the first appended to the second's new segment")
        for store in [first, second] { store.close() }
    }

    @Test func typedWritesAndRefusalsChangeNothing() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        defer { store.close() }
        try store.set(.integer(5), forKey: "n")
        #expect(throws: KVStoreError.self) { try store.setFileContent(bytes("five"), forKey: "n") }
        #expect(store.value(forKey: "n") == .integer(5))
        try store.setFileContent(bytes("6\n"), forKey: "n")
        #expect(store.value(forKey: "n") == .integer(6))
        #expect(throws: KVStoreError.keyExists("n")) {
            try store.set(.bool(true), forKey: "m")
            try store.rename("m", to: "n", replace: false)
        }
        #expect(throws: KVStoreError.noSuchKey("nope")) { try store.rename("nope", to: "x") }
        try store.convert(key: "n", to: .string)
        #expect(store.value(forKey: "n") == .string("6"))
        #expect(throws: KVStoreError.self) { try store.convert(key: "m", to: .date) }
    }

    @Test func quotaRefusalsAreLoggedAndChangeNothing() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        defer { store.close() }
        try store.set(.data(Data(count: 1_000_000)), forKey: "big")
        #expect(throws: KVStoreError.storeFull(key: "more", over: 1_000_000 + 50_000 - 1_048_576)) {
            try store.set(.data(Data(count: 50_000)), forKey: "more")
        }
        #expect(throws: KVStoreError.valueTooLarge(key: "big", bytes: 1_048_577)) {
            try store.set(.data(Data(count: 1_048_577)), forKey: "big")
        }
        try store.removeValue(forKey: "big")
        for n in 0..<1024 { try store.set(.bool(true), forKey: "k\(n)") }
        #expect(throws: KVStoreError.tooManyKeys(key: "k1024")) { try store.set(.bool(true), forKey: "k1024") }
        #expect(store.usage.keys == 1024)
        let log = String(decoding: store.changeLogContents(), as: UTF8.self)
        #expect(log.components(separatedBy: "\"reason\":\"QuotaViolationChange\",\"code\":2").count == 4)
        #expect(log.contains("\"keys\":[\"k1024\"]"))
    }

    @Test func compactionKeepsTheStoreAndBoundsTheJournal() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        for n in 0..<60_000 { try store.set(.integer(Int64(n)), forKey: "k\(n % 100)") }
        try store.removeValue(forKey: "k0")
        store.close()
        let folder = try #require(Files.list(root.sub("sync/devices").path).first)
        let files = Files.list(root.sub("sync/devices/\(folder)").path)
        #expect(files.filter { $0.hasPrefix("snapshot-") }.count == 1, "\(files)")
        #expect(files.filter { $0.hasPrefix("journal-") }.count == 1, "\(files)")
        let again = try openStore(root, device: "a")
        defer { again.close() }
        #expect(again.usage.keys == 99)
        #expect(again.value(forKey: "k99") == .integer(59_999))
        #expect(again.value(forKey: "k0") == nil)
    }

    @Test func twoDevicesMergeLastWriterWins() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try openStore(root, device: "a")
        let b = try openStore(root, device: "b")
        defer { a.close(); b.close() }
        try a.set(.string("from a"), forKey: "k")
        b.refresh()
        #expect(b.value(forKey: "k") == .string("from a"))
        try b.set(.string("from b"), forKey: "k")
        try b.set(.integer(1), forKey: "only-b")
        let change = a.refresh()
        #expect(change == StoreChange(reason: .serverChange, keys: ["k", "only-b"], time: change!.time))
        #expect(a.values == b.values)
        try a.removeValue(forKey: "only-b")
        b.refresh()
        #expect(b.value(forKey: "only-b") == nil)
        let log = String(decoding: b.changeLogContents(), as: UTF8.self)
        #expect(log.contains("\"reason\":\"ServerChange\",\"code\":0,\"keys\":[\"only-b\"]"))
    }

    @Test func aDeviceThatSawAWriteOverridesItWhateverTheWallClocks() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let ahead = try openStore(root, device: "ahead", clock: HybridLogicalClock { HybridLogicalClock.systemMilliseconds() + 3_600_000 })
        let behind = try openStore(root, device: "behind", clock: HybridLogicalClock { HybridLogicalClock.systemMilliseconds() - 3_600_000 })
        defer { ahead.close(); behind.close() }
        try ahead.set(.string("first"), forKey: "k")
        behind.refresh()
        try behind.set(.string("second"), forKey: "k")
        ahead.refresh()
        #expect(ahead.value(forKey: "k") == .string("second"))
    }

    @Test func initialSyncReportsWhatChangedWhileAway() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try openStore(root, device: "a")
        try a.set(.integer(1), forKey: "x")
        let b = try openStore(root, device: "b")
        b.close()
        try a.set(.integer(2), forKey: "y")
        try a.set(.integer(3), forKey: "x")
        a.close()
        let b2 = try openStore(root, device: "b")
        defer { b2.close() }
        let log = String(decoding: b2.changeLogContents(), as: UTF8.self).split(separator: "\n")
        #expect(log.count == 2)
        #expect(log[0].contains("\"seq\":1,") && log[0].contains("\"reason\":\"InitialSyncChange\",\"code\":1,\"keys\":[\"x\"]"))
        #expect(log[1].contains("\"seq\":2,") && log[1].contains("\"keys\":[\"x\",\"y\"]"))
    }

    @Test func anotherStoreIDIsAnAccountChange() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try openStore(root, device: "a", sync: "one")
        try a.set(.integer(1), forKey: "x")
        a.close()
        let other = try openStore(root, device: "other", sync: "two")
        try other.set(.integer(2), forKey: "y")
        other.close()
        try FileManager.default.removeItem(at: root.sub("one"))
        try FileManager.default.moveItem(at: root.sub("two"), to: root.sub("one"))
        let again = try openStore(root, device: "a", sync: "one")
        defer { again.close() }
        #expect(again.values == ["y": .integer(2)])
        #expect(String(decoding: again.changeLogContents(), as: UTF8.self).contains("\"reason\":\"AccountChange\",\"code\":3"))
    }

    @Test("a compaction after the sync directory switched to another store, before a refresh noticed, writes nothing of the old store into the new one")
    func aCompactionBeforeTheAccountChangeIsNoticedLeavesTheNewStoreAlone() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a", sync: "one")
        defer { store.close() }
        try store.set(.integer(1), forKey: "x")
        let folder = store.sync.folder(of: store.deviceID).path
        // The account changes: the sync directory now holds another store, empty (its devices' folders not there yet).
        try FileManager.default.removeItem(atPath: root.sub("one/devices").path)
        try Files.writeAtomically(root.sub("one/store-id").path, Array("another-store\n".utf8))
        // A compaction a write made due runs (on its queue) before the refresh that takes the new store.
        store.compact()
        #expect(!FileManager.default.fileExists(atPath: folder), "the old store's records were written into the new store")
        store.refresh()
        #expect(store.values == [:])
        #expect(String(decoding: store.changeLogContents(), as: UTF8.self).contains("\"reason\":\"AccountChange\",\"code\":3"))
        try store.set(.integer(2), forKey: "y")
        let other = try openStore(root, device: "b", sync: "one")
        defer { other.close() }
        #expect(other.values == ["y": .integer(2)])
    }

    @Test func statusIsJSON() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "laptop")
        defer { store.close() }
        try store.set(.string("x"), forKey: "k")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(store.status().json().utf8)) as? [String: Any])
        #expect((object["keys"] as? [String: Int])?["used"] == 1)
        #expect((object["bytes"] as? [String: Int])?["used"] == 2)
        #expect((object["device"] as? [String: Any])?["name"] as? String == "laptop")

        // Per device: its state, how far it read the others, how far behind it is, when it was last heard from.
        let desk = try openStore(root, device: "desk")
        desk.refresh()  // reads the laptop's k
        desk.close()  // publishes its progress, closed
        store.refresh()
        let status = try #require(try JSONSerialization.jsonObject(with: Data(store.status().json().utf8)) as? [String: Any])
        let devices = try #require(status["devices"] as? [[String: Any]])
        let laptop = try #require(devices.first { $0["name"] as? String == "laptop" })
        let other = try #require(devices.first { $0["name"] as? String == "desk" }, "\(devices)")
        let written = try #require(store.entry(forKey: "k")).stamp.time.date
        #expect(laptop["state"] as? String == "this" && laptop["behindSeconds"] as? Double == 0 && laptop["secondsSinceHeard"] == nil,
                "\(laptop)")
        #expect(other["state"] as? String == "stopped", "\(other)")
        #expect(other["read"] as? [String: String] == [store.deviceID.hex: DateText.format(written)], "\(other)")
        #expect(other["behindSeconds"] as? Double == 0, "\(other)")
        #expect((other["secondsSinceHeard"] as? Double).map { (0..<60).contains($0) } == true, "\(other)")
    }
}
