import Foundation
import Testing
@testable import KVStore

/// Issue 38 item 3: a device the new roster did not reach goes on sealing under the old epoch, whose key
/// the devices revoked since still hold (docs/sealed.md § Superseded keys). Nothing is refused (the
/// records are a member's), but it is seen, on the other members and on the device itself.
@Suite("Sealed stores: a superseded key is seen")
struct SupersededKeyTests {
    /// A device's store on the replica `sync` of `root`, whose warnings go to `log`.
    private func open(_ root: TemporaryFolder, _ device: String, sync: String, log: Warnings) throws -> DeviceStore {
        try DeviceStore(syncDirectory: root.sub(sync), stateDirectory: root.sub("state-\(device)"), deviceName: device, warn: log.add)
    }

    /// The warnings of a superseded key in `store`'s status.
    private func superseded(_ store: DeviceStore) -> [SyncWarning] { store.status().warnings.filter { $0.kind == .supersededKey } }

    @Test("roster/ held back from c, which writes under epoch 1 after a revoked b: a warns, naming c, the epoch and b; c says so itself once roster/ reaches it; a store that reads no record of a later epoch says nothing; c's compaction seals them again and both say no more")
    func supersededKeyIsSeen() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let (a, _, _) = try MembershipTests.threeMembers(root)
        let aLog = Warnings(), cLog = Warnings()
        let aStore = try open(root, "a", sync: "sync", log: aLog)
        defer { aStore.close() }
        try aStore.set(PropertyListValue.string("before"), forKey: "k")
        try aStore.flush()
        // c's machine has the folder as it is now: its synchronizer will hold roster/ back from here on.
        try FileManager.default.copyItem(at: root.sub("sync"), to: root.sub("sync-c"))
        let cStore = try open(root, "c", sync: "sync-c", log: cLog)
        defer { cStore.close() }
        #expect(cStore.value(forKey: "k") == PropertyListValue.string("before"))

        _ = try a.revoke("b")
        _ = aStore.refresh()  // takes the keys of epoch 2
        try aStore.set(PropertyListValue.string("epoch 2"), forKey: "k")
        try aStore.flush()
        Thread.sleep(forTimeInterval: 0.01)  // c's write comes after a's first under epoch 2, as a clock says
        try cStore.set(PropertyListValue.string("sealed under epoch 1"), forKey: "x")
        try cStore.flush()
        #expect(superseded(aStore).isEmpty, "nothing of c read yet")
        #expect(superseded(cStore).isEmpty, "c knows of no later epoch yet")

        // c's folder reaches a, roster/ still held back from c.
        try copyFolder(root.sub("sync-c/devices/\(cStore.deviceID.hex)").path, to: root.sub("sync/devices/\(cStore.deviceID.hex)").path)
        _ = aStore.refresh()
        #expect(aStore.value(forKey: "x") == PropertyListValue.string("sealed under epoch 1"), "a member's record is not refused")
        let seen = try #require(superseded(aStore).first)
        #expect(seen.device == cStore.deviceID.hex)
        for part in ["c (", "under epoch 1", "after epoch 2 began", "b (revoked since) holds its key"] { #expect(seen.message.contains(part)) }
        #expect(aLog.all.filter { $0.contains("under epoch 1") }.count == 1, "logged once")
        _ = aStore.refresh()
        #expect(aLog.all.filter { $0.contains("under epoch 1") }.count == 1, "and not again")

        // roster/ and a's folder reach c: it takes epoch 2, and says which of its writes were sealed under epoch 1.
        try copyFolder(root.sub("sync/roster").path, to: root.sub("sync-c/roster").path)
        try copyFolder(root.sub("sync/devices/\(aStore.deviceID.hex)").path, to: root.sub("sync-c/devices/\(aStore.deviceID.hex)").path)
        _ = cStore.refresh()
        #expect(cStore.value(forKey: "k") == PropertyListValue.string("epoch 2"))
        let own = try #require(superseded(cStore).first { $0.device == cStore.deviceID.hex })
        #expect(own.message.hasPrefix("this device sealed writes under epoch 1") && own.message.contains("b (revoked since)"))
        #expect(cLog.contain("this device sealed writes under epoch 1"))

        // c's compaction seals them again under epoch 2: c says nothing more, nor does a once it reads c's snapshot.
        cStore.compact()
        #expect(superseded(cStore).isEmpty)
        try copyFolder(root.sub("sync-c/devices/\(cStore.deviceID.hex)").path, to: root.sub("sync/devices/\(cStore.deviceID.hex)").path)
        _ = aStore.refresh()
        #expect(superseded(aStore).isEmpty && aStore.value(forKey: "x") == PropertyListValue.string("sealed under epoch 1"))
    }
}
