import Foundation
import Testing
@testable import KVStore

/// Issue 18 item 5: the sync directory is opened once and held by its
/// descriptor; renaming it (or a parent) and putting another folder in its
/// place under a running device does not redirect its writes.
@Suite("A sync directory moved under a running device")
struct MovedSyncDirectoryTests {
    let fixture = SyncFixture()

    @Test("moved, with another store put in its place: writes go on into the folder the device opened, the other folder is untouched, the status and the log say so; moved back, both clear",
          arguments: [false, true])
    func writesStayInTheFolderOpened(movesParent: Bool) throws {
        defer { fixture.cleanup() }
        let base = movesParent ? "parent/sync" : "sync"
        let a = try fixture.open("a", sync: base)
        defer { a.close() }
        try a.set(.integer(1), forKey: "k")
        let other = try fixture.open("other", sync: "elsewhere")
        try other.set(.integer(9), forKey: "theirs")
        other.close()
        let root = fixture.root.path
        let (moved, replaced) = movesParent ? ("parent", "parent-moved") : (base, "sync-moved")
        #expect(rename(root + "/" + moved, root + "/" + replaced) == 0)
        if movesParent { try Files.makeDirectory(root + "/parent") }
        #expect(rename(root + "/elsewhere", root + "/" + base) == 0)
        let before = try fileTree(root + "/" + base)

        a.refresh()
        try a.set(.integer(2), forKey: "j")
        a.compact()
        a.refresh()
        #expect(a.values == ["k": .integer(1), "j": .integer(2)], "no AccountChange: the store is the one it opened")
        #expect(try fileTree(root + "/" + base) == before, "nothing was written into the folder now at the path")
        let warning = try #require(a.status().warnings.first { $0.kind == .syncDirectoryMoved })
        let movedTo = root + "/" + (movesParent ? "parent-moved/sync" : replaced)
        #expect(warning.message.contains("now at \(movedTo)") && warning.message.contains("another folder was put in its place"), "\(warning.message)")
        #expect(warning.fix.contains("unmount and mount again"))
        a.logHealth(force: true)
        #expect(fixture.warnings.contain("the sync directory \(root)/\(base) was moved"))

        let reader = try DeviceStore(syncDirectory: URL(fileURLWithPath: movedTo), stateDirectory: fixture.root.sub("state-reader"),
                                     readOnly: true, warn: { _ in })
        #expect(reader.values == ["k": .integer(1), "j": .integer(2)], "the writes are in the folder the device opened")
        reader.close()

        #expect(rename(root + "/" + base, root + "/elsewhere") == 0)
        if movesParent { #expect(rmdir(root + "/parent") == 0) }
        #expect(rename(root + "/" + replaced, root + "/" + moved) == 0)
        #expect(!a.status().warnings.contains { $0.kind == .syncDirectoryMoved })
        a.logHealth(force: true)
        #expect(fixture.warnings.contain("resolved: the sync directory"))
    }
}
