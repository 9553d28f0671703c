import Foundation
import Testing
@testable import KVStore

/// docs/command-line.md § Commands without a mount: reading a store never writes it, so a read-only sync
/// directory serves `kvfs get`, `ls` and `status` (issue 7.16).
@Suite("Reading without writing")
struct ReadOnlyTests {
    @Test("a store opened read-only reads what every device wrote and changes no file, nor makes a missing state directory")
    func readingWritesNothing() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try openStore(root, device: "a"), b = try openStore(root, device: "b")
        try a.set(.integer(1), forKey: "k")
        try b.set(.string("b"), forKey: "j")
        let id = a.deviceID
        a.close()
        b.close()
        let before = try fileTree(root.path)

        let reader = try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), readOnly: true, warn: { _ in })
        #expect(reader.values == ["k": .integer(1), "j": .string("b")])
        #expect(reader.deviceID == id && reader.deviceName == "a" && reader.isReadOnly)
        #expect(reader.status().devices.count == 2)
        #expect(reader.refresh() == nil)
        do {
            try reader.set(.integer(2), forKey: "k")
            Issue.record("a read-only store took a write")
        } catch {
            #expect("\(error)".contains("read-only"))
        }
        reader.close()
        let stranger = try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-new"), readOnly: true, warn: { _ in })
        #expect(stranger.values == ["k": .integer(1), "j": .string("b")])
        stranger.close()
        let missing = try DeviceStore(syncDirectory: root.sub("no-store"), stateDirectory: root.sub("state-new"), readOnly: true, warn: { _ in })
        #expect(missing.values.isEmpty && missing.storeID.isEmpty)
        missing.close()

        #expect(try fileTree(root.path) == before, "reading changed the files")
    }

    @Test("a reader says the state directory is busy while a process holds it, as a writer would (the command line then goes through its mount)")
    func aReaderSeesTheStateDirectoryHeld() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let holder = try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), owner: "mount /m", warn: { _ in })
        #expect {
            _ = try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), readOnly: true, warn: { _ in })
        } throws: { error in
            guard case let .stateDirectoryBusy(_, who)? = error as? KVStoreError else { return false }
            return who.contains("mount /m")
        }
        holder.close()
        try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), readOnly: true, warn: { _ in }).close()
    }
}
