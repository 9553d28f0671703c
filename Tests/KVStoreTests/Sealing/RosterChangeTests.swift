import Foundation
import Testing
@testable import KVStore

/// A synchronizer copies files in any order: a new member's records may reach
/// a device before the roster version that makes it a member. They are
/// refused until that version arrives (docs/sealed.md § Refusals), and then
/// read, though the folder did not change since.
@Suite("Sealed folders read again when the roster changes")
struct RosterChangeTests {
    @Test("a device's records that arrive before the roster version adding it are refused, then read once that version arrives")
    func recordsBeforeTheirRosterVersion() throws {
        let root = TemporaryFolder("kvfs-roster-change")
        defer { root.cleanup() }
        // a seals the store on sync-a; sync-b is its copy on another machine, where b joins with the recovery key.
        try openStore(root, device: "a", sync: "sync-a").close()
        let recovery = try Membership(syncDirectory: root.sub("sync-a"), stateDirectory: root.sub("state-a")).seal(deviceName: "a").recoveryKey
        let a = try openStore(root, device: "a", sync: "sync-a")
        defer { a.close() }
        try Files.makeDirectory(root.sub("sync-b").path)
        try Files.writeAtomically(root.sub("sync-b/store-id").path, try #require(try Files.read(root.sub("sync-a/store-id").path)))
        try copyFolder(root.sub("sync-a/roster").path, to: root.sub("sync-b/roster").path)
        try Membership(syncDirectory: root.sub("sync-b"), stateDirectory: root.sub("state-b")).recover(with: recovery, deviceName: "b")
        let b = try openStore(root, device: "b", sync: "sync-b")
        try b.set(.string("from b"), forKey: "k")
        let folder = "devices/" + b.deviceID.hex
        b.close()
        // b's folder arrives first: refused, b is no member in the roster a has.
        try copyFolder(root.sub("sync-b/" + folder).path, to: root.sub("sync-a/" + folder).path)
        a.refresh()
        #expect(a.value(forKey: "k") == nil)
        #expect(a.status().warnings.contains { $0.kind == .refused && $0.message.contains("its device is not a member") })
        // Then the version adding b: b's folder, unchanged since, is read under the new keys.
        try copyFolder(root.sub("sync-b/roster").path, to: root.sub("sync-a/roster").path)
        a.refresh()
        #expect(a.value(forKey: "k") == .string("from b"))
        #expect(!a.status().warnings.contains { $0.kind == .refused })
    }
}
