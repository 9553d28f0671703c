import Foundation
import Testing
@testable import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// docs/format.md § Privacy and links: the daemon opens nothing through a symbolic
/// link (issue 7.5). Each test plants links where the store writes, and checks
/// that their targets (files outside the store) keep their bytes.
@Suite("Links planted in the store's folders")
struct SymlinkTests {
    /// Files outside the store, each with bytes that must stay as they are.
    struct Victims {
        let root: TemporaryFolder
        private(set) var contents: [String: String] = [:]

        /// Plants a link at `path` to a new victim file.
        mutating func plant(at path: String) throws {
            let victim = root.sub("victim-\(contents.count)").path
            let text = "precious \(contents.count)\n"
            try Data(text.utf8).write(to: URL(fileURLWithPath: victim))
            #expect(symlink(victim, path) == 0, "cannot plant a link at \(path)")
            contents[victim] = text
        }

        /// The victims whose bytes changed.
        var touched: [String] {
            contents.filter { (try? String(contentsOfFile: $0.key, encoding: .utf8)) != $0.value }.map(\.key)
        }
    }

    @Test("links planted under the temporary names of device.json, progress.json, the snapshot, the state files and as the change log are never written through")
    func linksUnderTemporaryNamesAreNeverWrittenThrough() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        var store = try openStore(root, device: "a")
        try store.set(.integer(1), forKey: "k")
        let folder = root.sub("sync/devices/\(store.deviceID.hex)").path, state = root.sub("state-a").path
        store.close()
        var victims = Victims(root: root)
        for name in [".device.json.tmp", ".progress.json.tmp", ".writer.json.tmp", "." + DeviceFolder.snapshotName(2) + ".tmp"] {
            try victims.plant(at: folder + "/" + name)
        }
        for name in [".store-id.tmp", ".seen.log.tmp", "changes.log"] { try victims.plant(at: state + "/" + name) }

        // A new name (device.json), a write, a quota refusal (the change log), a compaction, progress and seen stamps at close.
        store = try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), deviceName: "renamed", warn: { _ in })
        try store.set(.integer(2), forKey: "k")
        #expect(throws: KVStoreError.self) { try store.set(.data(Data(count: 2_000_000)), forKey: "big") }
        store.compact()
        store.close()
        #expect(victims.touched.isEmpty, "written through a link: \(victims.touched)")
        let again = try openStore(root, device: "a")
        defer { again.close() }
        #expect(again.value(forKey: "k") == .integer(2))
        #expect(again.name(of: again.deviceID) == "a" && SyncDirectory(path: root.sub("sync").path).name(of: again.deviceID) == "a")
    }

    @Test("in a new store: links under the temporary names of store-id and device-id are never written through")
    func linksInANewStoreAreNeverWrittenThrough() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        try Files.makeDirectory(root.sub("sync").path)
        try Files.makeDirectory(root.sub("state-a").path)
        var victims = Victims(root: root)
        try victims.plant(at: root.sub("sync/.store-id.tmp").path)
        try victims.plant(at: root.sub("state-a/.device-id.tmp").path)
        let store = try openStore(root, device: "a")
        try store.set(.integer(1), forKey: "k")
        store.close()
        #expect(victims.touched.isEmpty, "written through a link: \(victims.touched)")
        #expect(SyncDirectory(path: root.sub("sync").path).storeID() != nil)
    }

    @Test("the sync and state directories a user names may themselves be links: those are followed, as any path is")
    func namedFoldersMayBeLinks() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        try Files.makeDirectory(root.sub("real/sync").path)
        try Files.makeDirectory(root.sub("real/state").path)
        #expect(symlink(root.sub("real/sync").path, root.sub("sync").path) == 0)
        #expect(symlink(root.sub("real/state").path, root.sub("state-a").path) == 0)
        var store = try openStore(root, device: "a")
        try store.set(.integer(1), forKey: "k")
        store.close()
        store = try openStore(root, device: "a")
        defer { store.close() }
        #expect(store.values == ["k": .integer(1)])
        #expect(Files.list(root.sub("real/sync/devices").path) == [store.deviceID.hex])
    }

    @Test("this device's folder, or the devices folder, as a link: the store does not open, says why in one line, and writes nothing behind the link",
          arguments: [true, false])
    func aLinkedFolderIsRefused(linksDeviceFolder: Bool) throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        try store.set(.integer(1), forKey: "k")
        let linked = root.sub(linksDeviceFolder ? "sync/devices/\(store.deviceID.hex)" : "sync/devices").path
        store.close()
        let elsewhere = root.sub("elsewhere").path
        #expect(rename(linked, elsewhere) == 0 && symlink(elsewhere, linked) == 0)
        let before = try fileTree(elsewhere)
        do {
            _ = try openStore(root, device: "a")
            Issue.record("the store opened through a link at \(linked)")
        } catch {
            #expect("\(error)".contains(linked) && "\(error)".contains("symbolic link"))
            #expect(!"\(error)".contains("\n"))
        }
        #expect(try fileTree(elsewhere) == before, "something was written behind the link")
    }

    @Test("a link in place of the journal segment is refused; the file it points to keeps every byte")
    func aLinkedJournalIsRefused() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        try store.set(.integer(1), forKey: "k")
        let segment = root.sub("sync/devices/\(store.deviceID.hex)/" + DeviceFolder.segmentName(1)).path
        store.close()
        unlink(segment)
        var victims = Victims(root: root)
        try victims.plant(at: segment)
        #expect(throws: KVStoreError.self) { _ = try openStore(root, device: "a") }
        #expect(victims.touched.isEmpty)
    }
}
