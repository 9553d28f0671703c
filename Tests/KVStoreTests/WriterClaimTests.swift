import Foundation
import Testing
@testable import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18 item 8: the writer claim is checked wherever this device replaces
/// or removes files of its folder, and by its nonce, not its inode number
/// (docs/format.md § Writer claim).
@Suite("Writer claim")
struct WriterClaimTests {
    /// Another state directory's claim on `store`'s folder, as a copy of its state directory (a cloned disk) writes it.
    private static func foreignClaim(of store: DeviceStore) -> [UInt8] {
        let holder = WriterClaim.Holder(nonce: "c0ffee", stateInode: 0, statePath: "/clone/state", host: "clone", pid: 4242)
        return JSONDocument.sorted(holder) + [0x0A]
    }

    private static func folder(of store: DeviceStore) -> String {
        store.syncDirectory.path + "/devices/" + store.deviceID.hex
    }

    @Test("a claim rewritten in place by another state directory (same inode number) stops this device's writes")
    func aClaimRewrittenInPlaceIsAnothers() throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open()
        defer { store.close() }
        try store.set(.integer(1), forKey: "k")
        let path = Self.folder(of: store) + "/" + WriterClaim.fileName
        let inode = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64
        // Written over where it is: the inode number stays, only the nonce tells.
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        try file.truncate(atOffset: 0)
        try file.write(contentsOf: Self.foreignClaim(of: store))
        try file.close()
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64 == inode)
        let error = #expect(throws: KVStoreError.self) { try store.set(.integer(2), forKey: "k") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("another process (pid 4242"), "\(String(describing: error))")
        #expect(store.value(forKey: "k") == .integer(1))
    }

    /// The ways another claim can come to stand under the name `writer.json` once this device's claim is
    /// settled (an append then reads only the name's status, WriterClaim.confirm): each must still be seen.
    enum Takeover: String, CaseIterable, CustomTestStringConvertible {
        case renamedOver = "a copy's claim renamed over it, as a synchronizer writes"
        case renamedAway = "it renamed away, a copy's claim written under the name"
        case linkedThenRenamedOver = "a hard link made to it, then a copy's claim renamed over it"
        case rewrittenInPlace = "rewritten in place"
        case removed = "removed"
        var testDescription: String { rawValue }
    }

    @Test("once the claim is settled, each way another claim can take its name is seen at the next write; a removed claim is made anew",
          arguments: Takeover.allCases)
    func aSettledClaimTakenOverIsSeen(_ takeover: Takeover) throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open()
        defer { store.close() }
        try store.set(.integer(1), forKey: "k")
        Thread.sleep(forTimeInterval: WriterClaim.FileStamp.settled + 0.2)
        try store.set(.integer(2), forKey: "k")  // confirms the claim as settled: from now on one fstatat of its name
        let path = Self.folder(of: store) + "/" + WriterClaim.fileName
        let claim = Data(Self.foreignClaim(of: store))
        let manager = FileManager.default
        switch takeover {
        case .renamedOver:
            try claim.write(to: URL(fileURLWithPath: path + ".tmp"))
            #expect(rename(path + ".tmp", path) == 0)
        case .renamedAway:
            try manager.moveItem(atPath: path, toPath: path + ".old")
            try claim.write(to: URL(fileURLWithPath: path))
        case .linkedThenRenamedOver:
            try manager.linkItem(atPath: path, toPath: path + ".link")
            try claim.write(to: URL(fileURLWithPath: path + ".tmp"))
            #expect(rename(path + ".tmp", path) == 0)
        case .rewrittenInPlace:
            let file = try #require(FileHandle(forUpdatingAtPath: path))
            try file.truncate(atOffset: 0)
            try file.write(contentsOf: claim)
            try file.close()
        case .removed:
            try manager.removeItem(atPath: path)
        }
        if takeover == .removed {
            try store.set(.integer(3), forKey: "k")
            let folder = try #require(try Folder.open(Self.folder(of: store)))
            #expect(WriterClaim.holder(in: folder, of: DeviceFolder(path: Self.folder(of: store)))?.pid == Int(getpid()))
            #expect(store.value(forKey: "k") == .integer(3))
            return
        }
        let error = #expect(throws: KVStoreError.self) { try store.set(.integer(3), forKey: "k") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("another process (pid 4242"), "\(String(describing: error))")
        #expect(store.value(forKey: "k") == .integer(2))
    }

    @Test("a compaction that finishes after another state directory took the folder writes no snapshot and removes none of its files")
    func aCompactionFinishingAfterTheFolderWasTakenRemovesNothing() throws {
        let fixture = FaultFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open()
        defer { store.close() }
        try store.set(.integer(1), forKey: "k")
        try store.flush()  // nothing left to fsync but the compaction's retired segment
        let folder = Self.folder(of: store)
        let claim = Self.foreignClaim(of: store)
        // The copy takes the folder while the compaction makes the old segment durable, without the store's lock.
        fixture.disk.inject { faults in
            faults.beforeSync = { _ = try? Folder.open(folder)?.writeAtomically(WriterClaim.fileName, claim) }
        }
        store.compact()
        fixture.disk.inject { $0 = Faults() }
        let names = try Set(FileManager.default.contentsOfDirectory(atPath: folder))
        #expect(names.contains(DeviceFolder.segmentName(1)), "the old segment was removed: \(names.sorted())")
        #expect(!names.contains(DeviceFolder.snapshotName(2)), "a snapshot was written: \(names.sorted())")
        #expect(try Folder.open(folder)?.read(WriterClaim.fileName) == claim)
        #expect(fixture.warnings.contain("compacting the journal stopped"), "\(fixture.warnings.all)")
        #expect(throws: KVStoreError.self) { try store.set(.integer(2), forKey: "k") }
    }
}
