import Crypto
import Foundation
import Testing
@testable import KVStore

/// Issue 26 item 4, `kvfs seal` converts a store that holds values, by compaction, with nothing lost
/// (docs/sealed.md § Converting a store); item 2, roster versions refused are named in the status and
/// the log. Each store is sealed by its real roster (`Membership`), not by test keys.
@Suite("Sealing a store that holds values")
struct SealConversionTests {
    let fixture = SyncFixture()

    func membership(_ device: String) -> Membership {
        Membership(syncDirectory: fixture.root.sub("sync"), stateDirectory: fixture.root.sub("state-\(device)"))
    }

    /// Everything a device shows of the store: each key's value, and each key's history (stamp, device name, value).
    func contents(_ store: DeviceStore) throws -> [String: [String]] {
        var shown: [String: [String]] = [:]
        for key in Set(store.values.keys).union(["removed-key"]).sorted() {
            shown[key.string] = try [store.value(forKey: key).map { "\($0)" } ?? "none"] + store.history(forKey: key).map { version in
                "\(version.stamp) \(version.deviceName) \(try store.value(of: version).map { "\($0)" } ?? "removed")"
            }
        }
        return shown
    }

    /// The files of the sync directory that hold `text`.
    func grep(_ text: String) throws -> String {
        try runShell("grep -r -l -a -F -e \"$TEXT\" sync", in: fixture.root.path, environment: ["TEXT": text, "PATH": "/usr/bin:/bin"]).output
    }

    /// Devices a and b of a plain store, with values, history, a removal and a conflict, each having read the other.
    func plainStore() throws -> (DeviceStore, DeviceStore, written: [String]) {
        let a = try fixture.open("a"), b = try fixture.open("b")
        try a.set(.string("a-value-one"), forKey: "shared-key")
        try a.set(.string("a-value-two"), forKey: "shared-key")
        try a.set(.string("only-a-value"), forKey: "only-a-key")
        try b.set(.string("only-b-value"), forKey: "only-b-key")
        try b.set(.string("removed-value"), forKey: "removed-key")
        try b.removeValue(forKey: "removed-key")
        _ = b.refresh()
        try b.set(.string("b-value-wins"), forKey: "shared-key")
        try a.set(.string("a-conflict-value"), forKey: "conflict-key")  // before either reads the other's: a conflict
        Thread.sleep(forTimeInterval: 0.005)  // b's write a later millisecond than a's: b's wins, and a's change log says so
        try b.set(.string("b-conflict-value"), forKey: "conflict-key")
        _ = a.refresh()
        _ = b.refresh()
        let written = ["shared-key", "a-value-one", "a-value-two", "only-a-key", "only-a-value", "only-b-key", "only-b-value",
                       "removed-key", "removed-value", "b-value-wins", "conflict-key", "a-conflict-value", "b-conflict-value"]
        return (a, b, written)
    }

    @Test("a store with values, history, a removal, a conflict and a second device's folder is sealed with nothing lost, and no plain value is left")
    func convertsEverything() throws {
        guard !TestSealing.sealsEverything else { return }  // the store must start plain
        defer { fixture.cleanup() }
        var (a, b, written) = try plainStore()
        let before = try contents(a)
        let changeLog = try String(contentsOfFile: a.changeLogPath, encoding: .utf8)
        #expect(changeLog.contains("conflict-key"), "the conflict is in a's change log")
        #expect(before["shared-key"]?.count == 4 && before["removed-key"]?.count == 3, "\(before)")
        let bID = b.deviceID
        a.close()
        b.close()

        let sealed = try membership("a").seal(deviceName: "a")
        #expect(sealed.adopted.map(\.id) == [bID] && sealed.adopted[0].folderLeft == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.root.path + "/sync/devices/" + bID.hex))
        a = try fixture.open("a")
        #expect(fixture.warnings.contain("plain records were sealed by a compaction"))
        #expect(try contents(a) == before)
        #expect(try String(contentsOfFile: a.changeLogPath, encoding: .utf8) == changeLog)
        #expect(a.status().warnings.isEmpty, "\(a.status().warnings)")
        a.close()
        for text in written { #expect(try grep(text) == "", "\(text) is still readable") }
        // Once sealed, plain records planted at the start of a's folder (a newer plain snapshot) are refused, never sealed as a's.
        let planted = fixture.folder(of: a) + "/" + DeviceFolder.snapshotName(99)
        let forged = record(a.deviceID, 9_999_999_999_999, .put(key: "only-a-key", value: .string("forged")))
        try append(frames([forged, record(a.deviceID, 9_999_999_999_999, .snapshotEnd(count: 1))]), to: planted)
        a = try fixture.open("a")
        #expect(try contents(a) == before)
        #expect(a.status().warnings.contains { $0.kind == .refused && $0.file == planted })
        #expect(fixture.warnings.all.filter { $0.contains("plain records were sealed") }.count == 1)
        a.close()
        try FileManager.default.removeItem(atPath: planted)

        // b, a device of the plain store, is no member of the sealed one: it says so and writes nothing.
        let tree = try fileTree(fixture.root.path + "/sync")
        #expect(throws: KVStoreError.notMember(path: fixture.root.path + "/sync")) { try fixture.open("b") }
        #expect(try fileTree(fixture.root.path + "/sync") == tree)
        // Once paired, it reads every value and its history.
        try MembershipTests.pair(membership("a"), membership("b"), name: "b")
        b = try fixture.open("b")
        defer { b.close() }
        #expect(try contents(b) == before)
    }

    @Test("a device whose mount runs stops sealing unless forced; forced, it writes nothing more once it sees the roster, and nothing it wrote is lost once it joins")
    func runningPlainDevice() throws {
        guard !TestSealing.sealsEverything else { return }
        defer { fixture.cleanup() }
        var (a, b, written) = try plainStore()
        let before = a.values
        a.close()
        #expect(throws: MembershipError.self) { try membership("a").seal(deviceName: "a") }
        #expect(!Membership.isSealed(syncDirectory: fixture.root.sub("sync")))

        let sealed = try membership("a").seal(deviceName: "a", force: true)
        #expect(sealed.adopted.count == 1 && sealed.adopted[0].folderLeft?.contains("looks alive") == true, "\(sealed.adopted)")
        try b.set(.string("late-value"), forKey: "late-key")  // before it has seen the roster: plain, in its folder
        written += ["late-key", "late-value"]
        _ = b.refresh()
        #expect(throws: KVStoreError.notMember(path: fixture.root.path + "/sync")) { try b.set(.string("refused-value"), forKey: "refused-key") }
        #expect(b.status().warnings.contains { $0.kind == .notWriting && $0.message.contains("not a member") })
        #expect(fixture.warnings.contain("writes and reads nothing more"))
        a = try fixture.open("a")
        #expect(a.values == before, "a keeps every value b had written before the store was sealed")
        #expect(a.status().warnings.contains { $0.kind == .refused && $0.message.contains("not a member") })
        b.close()

        try MembershipTests.pair(membership("a"), membership("b"), name: "b")
        b = try fixture.open("b")
        defer { b.close() }
        _ = a.refresh()
        #expect(a.value(forKey: "late-key") == .string("late-value"), "what b wrote before it saw the roster is sealed and read")
        #expect(b.values == a.values && a.values.count == before.count + 1)
        #expect(a.status().warnings.isEmpty, "\(a.status().warnings)")
        a.close()
        for text in written { #expect(try grep(text) == "", "\(text) is still readable") }
    }

    @Test("a roster version signed by a non-member is refused, and named in the status and the log until it goes")
    func rosterRefusalInStatus() throws {
        guard !TestSealing.sealsEverything else { return }
        defer { fixture.cleanup() }
        try fixture.open("a").close()
        let a = membership("a")
        _ = try a.seal(deviceName: "a")
        let store = try fixture.open("a")
        defer { store.close() }
        let genesis = try #require(try a.pinned())
        let attacker = DeviceKeys(), intruder = DeviceID.random()
        let member = try Membership.member(.device, id: intruder, name: "intruder", signingKey: attacker.signingPublicKey,
                                           agreementKey: attacker.agreementPublicKey, key: SymmetricKey(size: .bits256), epoch: 1,
                                           storeID: genesis.storeID)
        let forged = try RosterVersion.signed(storeID: genesis.storeID, number: 2, previous: genesis.hash, epoch: 1,
                                              members: genesis.members + [member], earlier: [], signer: intruder, signingKey: attacker.signing)
        let name = RosterFolder.fileName(number: 2, signer: intruder)
        let path = fixture.root.path + "/sync/roster/" + name
        try Data(forged.bytes).write(to: URL(fileURLWithPath: path))
        _ = store.refresh()
        let said = "roster/\(name): refused: its signer \(intruder) is not a member"
        #expect(store.status().warnings.contains { $0.kind == .refused && $0.file == path && $0.message.contains(said) })
        #expect(fixture.warnings.all.filter { $0.contains(said) }.count == 1)
        _ = store.refresh()
        #expect(fixture.warnings.all.filter { $0.contains(said) }.count == 1, "said once")
        try FileManager.default.removeItem(atPath: path)
        _ = store.refresh()
        #expect(!store.status().warnings.contains { $0.kind == .refused })
    }
}
