import Foundation
import Testing
@testable import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// docs/command-line.md § Commands without a mount: only `--device-name` renames a device (issue 7.14);
/// docs/format.md § Writer claim: two processes never write as one device — a
/// cloned state directory is detected and re-identified (issue 7.15).
@Suite("Device identity")
struct DeviceIdentityTests {
    /// A store on `root/sync` as the device whose state is `root/<state>`.
    private func open(_ root: TemporaryFolder, _ state: String, name: String?, warnings: Warnings = Warnings()) throws -> DeviceStore {
        try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub(state), deviceName: name, warn: warnings.add)
    }

    @Test("opening a store keeps the device's name and does not rewrite device.json; only a name given renames it")
    func openingKeepsTheName() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        var store = try open(root, "state", name: "laptop")
        let file = root.sub("sync/devices/\(store.deviceID.hex)/device.json").path
        store.close()
        var before = stat()
        #expect(lstat(file, &before) == 0)
        store = try open(root, "state", name: nil)
        #expect(store.deviceName == "laptop")
        #expect(store.status().device.name == "laptop")
        store.close()
        var after = stat()
        #expect(lstat(file, &after) == 0 && after.st_ino == before.st_ino && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
                "device.json was written again")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == #"{"name":"laptop"}"#)
        store = try open(root, "state", name: "desk")
        store.close()
        #expect(try String(contentsOfFile: file, encoding: .utf8) == #"{"name":"desk"}"#)
    }

    @Test("a device name must be short and free of control characters; one from another device's folder that is not is never shown")
    func hostileNames() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        for bad in ["", " ", "two\nlines", "\u{1B}[2Jwiped", String(repeating: "x", count: 65)] {
            #expect(throws: KVStoreError.self, "\(bad.debugDescription)") { try open(root, "state-bad", name: bad) }
        }
        #expect(try DeviceName.validate(String(repeating: "é", count: 64)).count == 64)
        let other = try open(root, "state-other", name: "other")
        let otherID = other.deviceID
        other.close()
        // Another device's folder as a hostile synchronizer left it: a terminal escape as its name.
        try Data(#"{"name":"\u001b]0;pwned\u0007\u001b[2J"}"#.utf8).write(to: root.sub("sync/devices/\(otherID.hex)/device.json"))
        let store = try open(root, "state", name: "laptop")
        defer { store.close() }
        let names = store.status().devices.map(\.name)
        #expect(names.sorted() == [otherID.hex, "laptop"].sorted(), "\(names)")
    }

    @Test("a copy of a state directory becomes a device of its own, said in one warning; both devices see each other's writes")
    func aCopiedStateDirectoryIsReidentified() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let original = try open(root, "state1", name: "one")
        try original.set(.integer(1), forKey: "k")
        try FileManager.default.copyItem(atPath: root.sub("state1").path, toPath: root.sub("state2").path)
        let warnings = Warnings()
        var copy = try open(root, "state2", name: "two", warnings: warnings)
        #expect(copy.deviceID != original.deviceID)
        #expect(warnings.all.count == 1 && warnings.contain("copy") && warnings.contain(copy.deviceID.hex))
        #expect(!warnings.all[0].contains("\n"))
        try original.set(.integer(2), forKey: "from-one")
        try copy.set(.integer(3), forKey: "from-two")
        original.refresh()
        copy.refresh()
        #expect(original.values == ["k": .integer(1), "from-one": .integer(2), "from-two": .integer(3)])
        #expect(copy.values == original.values)
        let newID = copy.deviceID
        copy.close()
        copy = try open(root, "state2", name: nil, warnings: warnings)
        defer { copy.close(); original.close() }
        #expect(copy.deviceID == newID && warnings.all.count == 1, "the copy keeps its new id")
    }

    @Test("over a synchronizer: a copy of the state directory started on another machine's replica becomes a device of its own once the original's folder has arrived there")
    func aCopyOnAnotherReplicaIsReidentified() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        let original = try fixture.open("one", sync: "A")
        defer { original.close() }
        try original.set(.integer(1), forKey: "k")
        // The synchronizer has carried store-id and the original's folder to the second machine's replica...
        try Files.makeDirectory(fixture.root.path + "/B")
        try Files.writeAtomically(fixture.root.path + "/B/store-id", try #require(try Files.read(fixture.root.path + "/A/store-id")))
        try copyFolder(fixture.folder(of: original, sync: "A"), to: fixture.folder(of: original, sync: "B"))
        let carried = try fileTree(fixture.folder(of: original, sync: "B"))
        // ...and the state directory was restored there from a backup.
        try FileManager.default.copyItem(atPath: fixture.root.path + "/state-one", toPath: fixture.root.path + "/state-two")
        let copy = try fixture.open("two", sync: "B")
        defer { copy.close() }
        #expect(copy.deviceID != original.deviceID && fixture.warnings.contain("is a copy of the state directory"))
        try copy.set(.integer(2), forKey: "k")
        #expect(copy.values == ["k": .integer(2)])
        #expect(try fileTree(fixture.folder(of: original, sync: "B")) == carried, "the copy wrote into the original's folder")
    }

    @Test("another process that takes this device's folder (a copy that kept even the state directory's inode) stops this one's writes, in one line")
    func aSecondWriterOfTheFolderStopsTheFirst() async throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try open(root, "state", name: "one")
        defer { store.close() }
        try store.set(.integer(1), forKey: "k")
        // A second process from a state directory with the same inode, as on a cloned disk image: here this one,
        // through another path, with its lock file gone (a clone's lock does not reach this process either).
        try FileManager.default.createSymbolicLink(atPath: root.sub("elsewhere").path, withDestinationPath: root.sub("state").path)
        unlink(root.sub("state/lock").path)
        await #expect(processExitsWith: .success, "the second process opens the store as the same device") {
            [sync = root.sub("sync").path as String, state = root.sub("elsewhere").path as String] in
            let second = try DeviceStore(syncDirectory: URL(fileURLWithPath: sync), stateDirectory: URL(fileURLWithPath: state),
                                         deviceName: "one", warn: { _ in })
            second.close()
        }
        let segment = root.sub("sync/devices/\(store.deviceID.hex)/" + DeviceFolder.segmentName(1)).path
        let journal = try Files.read(segment)
        for attempt in 1...2 {
            do {
                try store.set(.integer(2), forKey: "k")
                Issue.record("attempt \(attempt): a second writer of the folder was not noticed")
            } catch {
                #expect("\(error)".contains("another process (pid ") && "\(error)".contains(root.sub("elsewhere").path), "\(error)")
                #expect(!"\(error)".contains("pid \(getpid()) "), "\(error)")
                #expect(!"\(error)".contains("\n"))
            }
        }
        #expect(try Files.read(segment) == journal && store.value(forKey: "k") == .integer(1))
    }
}
