import Crypto
import Foundation
import Testing
@testable import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// A sealed store's membership (docs/sealed.md § Device keys, § Roster, § Recovery key, § Revocation):
/// the keys each member loads, and the roster versions a writer of the sync directory with no key
/// tries to slip in.
@Suite("Sealed membership")
struct MembershipTests {
    /// A store on `root/sync` opened once by `device` (so it has a store id and a device id), and its membership.
    static func device(_ root: TemporaryFolder, _ device: String) throws -> Membership {
        // A device that comes once the store is sealed cannot open it before it joins: its membership makes its id.
        if !Membership.isSealed(syncDirectory: root.sub("sync")) { try openStore(root, device: device).close() }
        return Membership(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-\(device)"))
    }

    /// Device a, which sealed the store on `root/sync`.
    static func sealed(_ root: TemporaryFolder) throws -> Membership {
        let a = try device(root, "a")
        _ = try a.seal(deviceName: "a")
        return a
    }

    /// Device a, which sealed the store, and b, which a paired.
    static func pairedPair(_ root: TemporaryFolder) throws -> (Membership, Membership) {
        let a = try sealed(root)
        let b = try device(root, "b")
        try pair(a, b, name: "b")
        return (a, b)
    }

    /// Devices a, b and c, members of the store a sealed, each paired by a.
    static func threeMembers(_ root: TemporaryFolder) throws -> (Membership, Membership, Membership) {
        let (a, b) = try pairedPair(root)
        let c = try device(root, "c")
        try pair(a, c, name: "c")
        return (a, b, c)
    }

    /// Puts `version` in `root`'s roster under its name, as a writer of the folder can.
    static func plant(_ version: RosterVersion, in root: TemporaryFolder) throws {
        try Data(version.bytes).write(to: root.sub("sync/roster").appendingPathComponent(RosterFolder.fileName(number: version.number, signer: version.signer)))
    }

    /// The roster's files.
    static func rosterFiles(_ root: TemporaryFolder) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.sub("sync/roster").path)) ?? []).sorted()
    }

    @Test("device.key is made 0600 in the state directory, read back the same, and a file that is no key is refused")
    func deviceKeyFile() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let state = try #require(try Folder.open(root.sub("state").path, create: true))
        #expect(try DeviceKeys.load(from: state) == nil)
        let made = try DeviceKeys.loadOrCreate(in: state)
        var status = stat()
        #expect(lstat(root.sub("state/device.key").path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let again = try #require(try DeviceKeys.load(from: state))
        #expect(again.bytes == made.bytes && again.signingPublicKey == made.signingPublicKey)
        for junk in [Data(), Data("hello".utf8), Data(made.bytes.dropLast()), Data(made.bytes + [0])] {
            try junk.write(to: root.sub("state/device.key"))
            #expect(throws: MembershipError.self) { try DeviceKeys.load(from: state) }
        }
    }

    @Test("sealing writes the genesis, pins it, and gives the sealer the keys; the recovery key is 32 words; a second seal is refused")
    func sealing() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try Self.device(root, "a")
        #expect(!Membership.isSealed(syncDirectory: root.sub("sync")))
        let recovery = try a.seal(deviceName: "a").recoveryKey
        #expect(recovery.words.split(separator: " ").count == 32)
        #expect(Membership.isSealed(syncDirectory: root.sub("sync")))
        let keys = try a.keys()
        #expect(keys.currentEpoch == 1 && keys.storeKeys.count == 1 && keys.members.keys.sorted() == [keys.device])
        #expect(keys.storeID == SyncDirectory(path: root.sub("sync").path).storeID())
        #expect(throws: MembershipError.self) { try a.seal(deviceName: "a") }
        // Another device of the folder is no member: it has no pin and no keys.
        let b = try Self.device(root, "b")
        #expect(throws: MembershipError("this device is not a member of the sealed store at \(root.sub("sync").path): pair it (kvfs pair on a member, kvfs join here)")) {
            try b.keys()
        }
        // Nothing secret is in the sync directory: the store key's bytes appear in no file.
        let key = keys.storeKeys[1]!.withUnsafeBytes { Data($0) }
        for file in try FileManager.default.subpathsOfDirectory(atPath: root.sub("sync").path) {
            let content = (try? Data(contentsOf: root.sub("sync/\(file)"))) ?? Data()
            #expect(content.range(of: key) == nil, "\(file)")
        }
    }

    @Test("a writer of the folder with no member key can neither add a device nor change the roster: forged, altered, replayed and rolled-back versions are refused")
    func keylessWriter() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try Self.sealed(root)
        let genesis = try #require(try a.pinned())
        let attacker = DeviceKeys()
        let intruder = DeviceID.random()
        let roster = root.sub("sync/roster").path

        // Forged: a version 2 that adds the intruder, signed by its own key (it is no member).
        let fakeKey = SymmetricKey(size: .bits256)
        let intruderMember = try Membership.member(.device, id: intruder, name: "intruder", signingKey: attacker.signingPublicKey,
                                                   agreementKey: attacker.agreementPublicKey, key: fakeKey, epoch: 1, storeID: genesis.storeID)
        let forged = try RosterVersion.signed(storeID: genesis.storeID, number: 2, previous: genesis.hash, epoch: 1,
                                              members: genesis.members + [intruderMember], earlier: [], signer: intruder,
                                              signingKey: attacker.signing)
        try Data(forged.bytes).write(to: URL(fileURLWithPath: roster + "/" + RosterFolder.fileName(number: 2, signer: intruder)))
        // The same, claiming a member as its signer.
        let me = try a.deviceID()
        let claimed = try RosterVersion.signed(storeID: genesis.storeID, number: 2, previous: genesis.hash, epoch: 1,
                                               members: genesis.members + [intruderMember], earlier: [], signer: me,
                                               signingKey: attacker.signing)
        try Data(claimed.bytes).write(to: URL(fileURLWithPath: roster + "/" + RosterFolder.fileName(number: 2, signer: me)))
        var (head, refused) = try a.refresh()
        #expect(head == genesis)
        #expect(refused.map(\.reason).sorted() == ["its signature does not check", "its signer \(intruder) is not a member"])
        #expect(try a.keys().members.count == 1)

        // Altered: a member's real version 2 (it adds b) with the intruder's keys put in b's place.
        try FileManager.default.removeItem(atPath: roster + "/" + RosterFolder.fileName(number: 2, signer: me))
        let b = try Self.device(root, "b")
        let bKeys = try DeviceKeys.loadOrCreate(in: b.stateFolder(create: true))
        let (current, _) = try Membership.storeKeys(of: genesis, member: genesis.member(me)!, agreement: a.deviceKeys().agreement)
        let bMember = try Membership.member(.device, id: b.deviceID(), name: "b", signingKey: bKeys.signingPublicKey,
                                            agreementKey: bKeys.agreementPublicKey, key: current, epoch: 1, storeID: genesis.storeID)
        let real = try a.write(after: genesis, members: genesis.members + [bMember], newEpoch: nil, signer: me,
                               signingKey: a.deviceKeys().signing)
        var altered = real.bytes
        let at = try #require(Self.range(of: bKeys.signingPublicKey, in: altered))
        altered.replaceSubrange(at, with: attacker.signingPublicKey)
        // A second device that trusts only the genesis meets the altered file in the real one's place.
        let c = Membership(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-c"))
        try c.pin(genesis)
        let realFile = roster + "/" + RosterFolder.fileName(number: 2, signer: me)
        try Data(altered).write(to: URL(fileURLWithPath: realFile))
        (head, refused) = try c.refresh()
        #expect(head == genesis && refused.contains(RosterRefusal(file: RosterFolder.fileName(number: 2, signer: me), reason: "its signature does not check")))
        try Data(real.bytes).write(to: URL(fileURLWithPath: realFile))
        #expect(try c.refresh().version == real)

        // Replayed: the genesis copied under version 3's name, and version 2 under 3's.
        for (bytes, signer) in [(genesis.bytes, genesis.signer), (real.bytes, me)] {
            let name = RosterFolder.fileName(number: 3, signer: signer)
            try Data(bytes).write(to: URL(fileURLWithPath: roster + "/" + name))
            (head, refused) = try c.refresh()
            #expect(head == real && refused.contains(RosterRefusal(file: name, reason: "its name does not say its number and signer (moved or replayed)")))
            try FileManager.default.removeItem(atPath: roster + "/" + name)
        }

        // Rolled back: version 2's file deleted, or the genesis written over it; the devices that pinned it keep it.
        try FileManager.default.removeItem(atPath: realFile)
        #expect(try c.refresh().version == real && a.refresh().version == real)
        try Data(genesis.bytes).write(to: URL(fileURLWithPath: realFile))
        #expect(try c.refresh().version == real)
        #expect(try c.pinned() == real)
    }

    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where Array(haystack[start..<start + needle.count]) == needle {
            return start..<start + needle.count
        }
        return nil
    }

    @Test("two members' versions with one number are resolved the same way on every device: the smaller signer id wins, not the hash")
    func concurrentVersions() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let (a, b) = try Self.pairedPair(root)
        let head = try a.refresh().version
        try b.pin(head)
        // Each adds a device of its own from the same head, before seeing the other's.
        var versions: [RosterVersion] = []
        for (member, name) in [(a, "x"), (b, "y")] {
            let (_, me, keys) = try member.asMember()
            let (current, _) = try Membership.storeKeys(of: head, member: me, agreement: keys.agreement)
            let other = DeviceKeys()
            let added = try Membership.member(.device, id: DeviceID.random(), name: name, signingKey: other.signingPublicKey,
                                              agreementKey: other.agreementPublicKey, key: current, epoch: head.epoch, storeID: head.storeID)
            versions.append(try member.write(after: head, members: head.members + [added], newEpoch: nil, signer: me.id, signingKey: keys.signing))
        }
        let winner = versions.min { $0.signer < $1.signer }!
        // Both authors, each of which pinned its own, and a third device that pinned neither, end on the same one.
        let c = Membership(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-c"))
        try c.pin(head)
        #expect(try c.refresh().version == winner && a.refresh().version == winner && b.refresh().version == winner)
    }

    /// Pairs `joiner` through `member` in this process, the two sides on two threads.
    static func pair(_ member: Membership, _ joiner: Membership, name: String) throws {
        final class Outcome: @unchecked Sendable { var joined: Result<UInt64, MembershipError>? }
        let code = try member.startPairing()
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Thread {
            outcome.joined = Result { () throws(MembershipError) in try joiner.join(code: code, deviceName: name, timeout: .seconds(20)) }
            done.signal()
        }.start()
        let added = try member.completePairing(code, timeout: .seconds(20))
        done.wait()
        #expect(added.name == name)
        _ = try outcome.joined!.get()
    }

    @Test("pairing: the joiner gets the store's keys and every member sees it; the pairing files are gone after")
    func pairing() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let (a, b) = try Self.pairedPair(root)
        let (aKeys, bKeys) = (try a.keys(), try b.keys())
        #expect(aKeys.members.keys.sorted() == bKeys.members.keys.sorted() && aKeys.members.count == 2)
        #expect(try aKeys.storeKeys[1] == bKeys.storeKeys[1] && bKeys.device == b.deviceID())
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.sub("sync/pairing").path).isEmpty)
        // A joiner pairs again, from b this time.
        let c = try Self.device(root, "c")
        try Self.pair(b, c, name: "c")
        #expect(try a.keys().members.count == 3 && c.keys().storeKeys[1] == aKeys.storeKeys[1])
    }

    @Test("a request made with the code but carrying a member's keys under another id (a copied state directory) is refused: nobody is added")
    func requestWithAMembersKeys() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try Self.sealed(root)
        let genesis = try a.refresh().version
        let code = try a.startPairing()
        let aKeys = try a.deviceKeys()
        let copy = PairingRequest(storeID: genesis.storeID, device: DeviceID.random(), name: "copy",
                                  signingKey: aKeys.signingPublicKey, agreementKey: aKeys.agreementPublicKey)
        let pairing = root.sub("sync/pairing")
        try FileManager.default.createDirectory(at: pairing, withIntermediateDirectories: true)
        try Data(copy.encoded(code: code)).write(to: pairing.appendingPathComponent(code.name + ".request"))
        let me = try a.deviceID()
        #expect(throws: MembershipError("the new machine holds the keys of member a (\(me)): its state directory is a copy of that one's; nobody was added")) {
            try a.completePairing(code, timeout: .seconds(5))
        }
        #expect(try a.refresh().version == genesis && Self.rosterFiles(root).count == 1)
    }

    @Test("a writer of the folder without the code can neither join nor make the joiner trust a forged roster")
    func pairingWithoutTheCode() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try Self.sealed(root)
        let genesis = try a.refresh().version
        let pairing = root.sub("sync/pairing")
        try FileManager.default.createDirectory(at: pairing, withIntermediateDirectories: true)

        // The member's side: a request at the code's name (the worst case: the name seen) made with another code.
        let code = try a.startPairing()
        let intruder = DeviceKeys()
        let wrongCode = PairingCode.random()
        let forgedRequest = PairingRequest(storeID: genesis.storeID, device: DeviceID.random(), name: "intruder",
                                           signingKey: intruder.signingPublicKey, agreementKey: intruder.agreementPublicKey)
        try Data(forgedRequest.encoded(code: wrongCode)).write(to: pairing.appendingPathComponent(code.name + ".request"))
        #expect(throws: MembershipError("pairing/\(code.name).request is not a request made with this code: nobody was added; start again with a new code")) {
            try a.completePairing(code, timeout: .seconds(5))
        }
        #expect(try a.refresh().version == genesis && Self.rosterFiles(root).count == 1)

        // The joiner's side: an accept made without the code, naming a roster the intruder forged that adds the joiner.
        let b = try Self.device(root, "b")
        let bCode = PairingCode.random()
        let bID = try b.deviceID()
        let bKeys = try DeviceKeys.loadOrCreate(in: b.stateFolder())
        let fakeKey = SymmetricKey(size: .bits256)
        let forgedGenesis = try RosterVersion.signed(
            storeID: genesis.storeID, number: 1, previous: [UInt8](repeating: 0, count: 32), epoch: 1,
            members: [try Membership.member(.device, id: bID, name: "b", signingKey: bKeys.signingPublicKey, agreementKey: bKeys.agreementPublicKey,
                                            key: fakeKey, epoch: 1, storeID: genesis.storeID),
                      try Membership.member(.recovery, id: DeviceID.random(), name: "r", signingKey: intruder.signingPublicKey,
                                            agreementKey: intruder.agreementPublicKey, key: fakeKey, epoch: 1, storeID: genesis.storeID)],
            earlier: [], signer: bID, signingKey: intruder.signing)
        try Self.plant(forgedGenesis, in: root)
        let forgedAccept = PairingAccept(storeID: genesis.storeID, device: bID, number: 1, hash: forgedGenesis.hash)
        try Data(forgedAccept.encoded(code: wrongCode)).write(to: pairing.appendingPathComponent(bCode.name + ".accept"))
        #expect(throws: MembershipError("pairing/\(bCode.name).accept is not an answer made with this code for this device: not joined")) {
            try b.join(code: bCode, deviceName: "b", timeout: .seconds(5))
        }
        #expect(try b.pinned() == nil)
        #expect(throws: MembershipError.self) { try b.keys() }
        #expect(!FileManager.default.fileExists(atPath: pairing.appendingPathComponent(bCode.name + ".request").path))
        // With no answer at all, the joiner gives up at its timeout, trusting nothing.
        let silent = PairingCode.random()
        #expect(throws: MembershipError("timed out waiting for the member's answer (is kvfs pair still running there, with this code?)")) {
            try b.join(code: silent, deviceName: "b", timeout: .milliseconds(300))
        }
        #expect(try b.pinned() == nil)
    }

    @Test("codes and keys as words: typed back in any case with extra spaces; a wrong word or count is refused")
    func words() throws {
        #expect(WordCode.words.count == 256 && Set(WordCode.words).count == 256 && WordCode.words == WordCode.words.sorted())
        let code = PairingCode.random()
        #expect(try PairingCode(words: "  " + code.words.uppercased().replacingOccurrences(of: " ", with: " - ") + "\n").secret == code.secret)
        #expect(throws: MembershipError("\"zzz\" is not one of the code's words: check what you typed")) {
            try PairingCode(words: code.words + " zzz")
        }
        #expect(throws: MembershipError("the code has 16 words; 15 were typed")) {
            try PairingCode(words: code.words.split(separator: " ").dropLast().joined(separator: " "))
        }
        let recovery = RecoveryKey.random()
        #expect(try RecoveryKey(words: recovery.words).id == recovery.id)
        #expect(throws: MembershipError.self) { try RecoveryKey(words: code.words) }
    }

    @Test("the recovery key joins a new machine when every machine is lost; other words are refused")
    func recovery() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try Self.device(root, "a")
        let recovery = try a.seal(deviceName: "a").recoveryKey
        let b = try Self.device(root, "b")
        try Self.pair(a, b, name: "b")
        _ = try a.revoke("b")
        let storeKeys = try a.keys().storeKeys
        // Every machine lost: a new one with only the words.
        let c = try Self.device(root, "c")
        #expect(throws: MembershipError.self) { try c.recover(with: RecoveryKey.random(), deviceName: "c") }
        #expect(try c.pinned() == nil)
        try c.recover(with: RecoveryKey(words: recovery.words), deviceName: "c")
        let keys = try c.keys()
        #expect(keys.currentEpoch == 2 && keys.storeKeys[1] == storeKeys[1] && keys.storeKeys[2] == storeKeys[2])
        #expect(keys.members.count == 2)
        // The old machine, if it comes back, follows the version the recovery key signed.
        #expect(try a.keys().members.count == 2)
    }

    @Test("rotating the recovery key: only with the key in force; a new epoch the old key cannot open; the old key joins no machine, the new one does")
    func recoveryKeyRotation() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try Self.device(root, "a")
        let old = try a.seal(deviceName: "a").recoveryKey
        #expect(throws: MembershipError.self) { try a.rotateRecoveryKey(current: RecoveryKey.random()) }
        let before = try a.refresh().version
        let (new, epoch) = try a.rotateRecoveryKey(current: RecoveryKey(words: old.words))
        let head = try a.refresh().version
        #expect(epoch == before.epoch + 1 && head.epoch == epoch && head.signer == old.id)
        #expect(head.recoveryMember?.id == new.id && head.member(old.id) == nil)
        // The old key's wrap is of the epochs before: it opens nothing of the new one.
        let oldMember = try #require(before.recoveryMember)
        #expect(throws: MembershipError.self) { try Membership.storeKeys(of: head, member: oldMember, agreement: old.keys.agreement) }
        let newMember = try #require(head.recoveryMember)
        let (current, earlier) = try Membership.storeKeys(of: head, member: newMember, agreement: new.keys.agreement)
        #expect(try current == a.keys().storeKeys[epoch] && earlier.count == Int(epoch - 1))
        // The old key is rotated out, and cannot rotate again; the new one joins a machine.
        let c = try Self.device(root, "c")
        #expect(throws: MembershipError.self) { try c.recover(with: RecoveryKey(words: old.words), deviceName: "c") }
        #expect(throws: MembershipError.self) { try a.rotateRecoveryKey(current: RecoveryKey(words: old.words)) }
        try c.recover(with: RecoveryKey(words: new.words), deviceName: "c")
        #expect(try c.keys().currentEpoch == epoch)
    }

    @Test("revocation: a new epoch whose key the revoked device does not get; its later roster versions are refused; it keeps what it had")
    func revocation() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let (a, b, c) = try Self.threeMembers(root)
        let before = try b.keys()
        let bID = try b.deviceID()
        #expect(throws: MembershipError("no member of the sealed store is nobody (kvfs devices lists the devices)")) { try a.revoke("nobody") }
        #expect(throws: MembershipError.self) { try a.revoke(a.deviceID().hex) }
        let revoked = try a.revoke(String(bID.hex.prefix(6)))
        #expect(revoked.name == "b" && revoked.epoch == 2)
        let (aKeys, cKeys) = (try a.keys(), try c.keys())
        #expect(aKeys.currentEpoch == 2 && cKeys.currentEpoch == 2 && aKeys.storeKeys[2] == cKeys.storeKeys[2])
        #expect(aKeys.members[bID] == nil && cKeys.members[bID] == nil && aKeys.members.count == 2)
        #expect(aKeys.storeKeys[1] == before.storeKeys[1] && aKeys.storeKeys[2] != before.storeKeys[1])
        // b is refused its keys from the new version on, and its wrap of epoch 2 does not exist.
        #expect(throws: MembershipError.self) { try b.keys() }
        // b, still holding its key, writes a version after the revocation that adds itself back: refused.
        let head = try a.refresh().version
        let bKeys = try b.deviceKeys()
        let back = try Membership.member(.device, id: bID, name: "b", signingKey: bKeys.signingPublicKey, agreementKey: bKeys.agreementPublicKey,
                                         key: SymmetricKey(size: .bits256), epoch: 2, storeID: head.storeID)
        let comeback = try RosterVersion.signed(storeID: head.storeID, number: head.number + 1, previous: head.hash, epoch: 2,
                                                members: head.members + [back], earlier: head.earlier, signer: bID, signingKey: bKeys.signing)
        try Self.plant(comeback, in: root)
        let (now, refused) = try a.refresh()
        #expect(now == head && refused.map(\.reason) == ["its signer \(bID) is not a member"])
        #expect(try c.keys().members[bID] == nil)
        // b writes instead a rival of the revocation (from the version before it, where it was a member), adding an
        // accomplice: the revocation removes b, so b's rival loses on every device, whatever its hash. (Two versions
        // that remove each other's signers are a fork: forkIsReportedAndSettled.)
        let (_, parent) = try #require(try a.pinnedWithParent())
        let before2 = try #require(parent)
        // Eight rivals, one after the other: were the hash to decide, one of them would win (all but surely).
        for _ in 0..<8 {
            let accomplice = DeviceKeys()
            let rival = try RosterVersion.signed(
                storeID: head.storeID, number: head.number, previous: before2.hash, epoch: before2.epoch,
                members: before2.members + [try Membership.member(.device, id: DeviceID.random(), name: "accomplice",
                                                                  signingKey: accomplice.signingPublicKey, agreementKey: accomplice.agreementPublicKey,
                                                                  key: SymmetricKey(size: .bits256), epoch: before2.epoch, storeID: head.storeID)],
                earlier: before2.earlier, signer: bID, signingKey: bKeys.signing)
            #expect(rival.refusal(after: before2) == nil)
            try Self.plant(rival, in: root)
            #expect(try a.refresh().version == head && c.refresh().version == head && a.keys().members.count == 2)
        }
    }

    /// A version after `parent` with `members`, signed by `signer` (whose keys `keys` are), in a new epoch when it revokes.
    static func rival(after parent: RosterVersion, members: [RosterMember], signer: DeviceID, keys: DeviceKeys,
                      root: TemporaryFolder) throws -> RosterVersion {
        let fresh = SymmetricKey(size: .bits256)
        let epoch = parent.epoch + 1
        var rewrapped: [RosterMember] = []
        for member in members {
            rewrapped.append(try Membership.member(member.role, id: member.id, name: member.name, signingKey: member.signingKey,
                                                   agreementKey: member.agreementKey, key: fresh, epoch: epoch, storeID: parent.storeID))
        }
        let version = try RosterVersion.signed(storeID: parent.storeID, number: parent.number + 1, previous: parent.hash, epoch: epoch,
                                               members: rewrapped, earlier: try KeyWrap.sealEarlier([SymmetricKey(size: .bits256)], under: fresh, storeID: parent.storeID),
                                               signer: signer, signingKey: keys.signing)
        try Self.plant(version, in: root)
        return version
    }

    @Test("a revoked device's rival that drops its revoker, retried until its hash is smaller, is a fork: reported on every member, neither taken, no roster change written; a member both keep settles it, and the revocation stands everywhere")
    func forkIsReportedAndSettled() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let (a, b, c) = try Self.threeMembers(root)
        let (aID, bID, cID) = (try a.deviceID(), try b.deviceID(), try c.deviceID())
        let before = try a.refresh().version
        #expect(try b.refresh().version == before && c.refresh().version == before)
        _ = try a.revoke("b")
        let revocation = try a.refresh().version
        // b, still at the version before (where it is a member), drops a, again and again until its hash is the smaller.
        var tries = 0
        var answer: RosterVersion
        repeat {
            answer = try Self.rival(after: before, members: before.members.filter { $0.id != aID }, signer: bID, keys: b.deviceKeys(), root: root)
            tries += 1
        } while !answer.hash.lexicographicallyPrecedes(revocation.hash) && tries < 64
        #expect(answer.hash.lexicographicallyPrecedes(revocation.hash), "a rival with the smaller hash in \(tries) tries")
        // Every member, and a device that pinned the version before, is back at that version, naming the fork.
        let d = Membership(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-d"))
        try d.pin(before)
        for member in [a, c, d] {
            let (head, refused, fork) = try member.refreshNotingFork()
            #expect(head == before)
            #expect(fork?.versions.map(\.signer).sorted() == [aID, bID].sorted())
            #expect(refused.contains { $0.reason.contains("roster version \(revocation.number) forked") })
        }
        // No roster change but a settlement: a pairing is refused; a cannot settle (the fork removes it).
        #expect(throws: MembershipError.self) { try a.startPairing() }
        #expect(throws: MembershipError.self) { try a.revoke("b") }
        // c, which both versions keep, settles it by revoking b: its version follows a's revocation.
        _ = try c.revoke("b")
        for member in [a, c, d] {
            let (head, _, fork) = try member.refreshNotingFork()
            #expect(fork == nil)
            #expect(head.member(bID) == nil && head.member(aID) != nil && head.member(cID) != nil)
        }
        #expect(throws: MembershipError.self) { try b.keys() }
    }

    @Test("only the recovery key changes the recovery key: a member's version that swaps it is refused")
    func recoveryKeyIsTheRecoveryKeys() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let (a, b) = try Self.pairedPair(root)
        let head = try a.refresh().version
        let mine = RecoveryKey.random().keys
        let swapped = try #require(head.recoveryMember)
        let members = head.members.filter { $0.role == .device } + [RosterMember(
            role: .recovery, id: swapped.id, name: swapped.name, signingKey: mine.signingPublicKey, agreementKey: mine.agreementPublicKey,
            wrappedKey: swapped.wrappedKey)]
        let version = try RosterVersion.signed(storeID: head.storeID, number: head.number + 1, previous: head.hash, epoch: head.epoch,
                                               members: members, earlier: head.earlier, signer: try b.deviceID(), signingKey: b.deviceKeys().signing)
        #expect(version.refusal(after: head) == "it changes the recovery key, which only the recovery key may")
        try Self.plant(version, in: root)
        let (now, refused) = try a.refresh()
        #expect(now == head && refused.map(\.reason) == ["it changes the recovery key, which only the recovery key may"])
    }

    @Test("the roster decoder takes exactly one well-formed version within its limits, and nothing cut or padded")
    func decoder() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let a = try Self.sealed(root)
        let genesis = try a.refresh().version
        #expect(RosterVersion.decode(genesis.bytes) == genesis)
        for length in 0..<genesis.bytes.count {
            #expect(RosterVersion.decode(Array(genesis.bytes.prefix(length))) == nil)
        }
        #expect(RosterVersion.decode(genesis.bytes + [0]) == nil)
        // At the member limit it decodes; one more member is refused, by the writer and the decoder.
        let key = SymmetricKey(size: .bits256)
        let keys = DeviceKeys()
        var members = genesis.members
        while members.count < RosterVersion.Limits.members {
            members.append(try Membership.member(.device, id: DeviceID.random(), name: String(repeating: "n", count: 64), signingKey: keys.signingPublicKey,
                                                 agreementKey: keys.agreementPublicKey, key: key, epoch: 1, storeID: genesis.storeID))
        }
        let full = try RosterVersion.signed(storeID: genesis.storeID, number: 2, previous: genesis.hash, epoch: 1, members: members,
                                            earlier: [], signer: genesis.signer, signingKey: keys.signing)
        #expect(RosterVersion.decode(full.bytes) != nil && full.bytes.count <= RosterVersion.Limits.bytes)
        members.append(members.last.map { RosterMember(role: .device, id: DeviceID.random(), name: $0.name, signingKey: $0.signingKey,
                                                       agreementKey: $0.agreementKey, wrappedKey: $0.wrappedKey) }!)
        #expect(throws: MembershipError.self) {
            try RosterVersion.signed(storeID: genesis.storeID, number: 2, previous: genesis.hash, epoch: 1, members: members,
                                     earlier: [], signer: genesis.signer, signingKey: keys.signing)
        }
        // Names: 64 bytes are taken, 65 are not; nor are control characters.
        #expect(RosterVersion.clipped(String(repeating: "é", count: 64)).utf8.count == 64)
    }
}
