import Foundation
import KVStore
import Testing

/// `kvfs pair`, `kvfs join` and `kvfs retire --revoke` driven as a person would, on one sync directory
/// (docs/command-line.md, docs/sealed.md § Pairing, § Revocation): the code `kvfs pair` prints is typed
/// into `kvfs join`. The store is sealed through the library (`kvfs seal` is the journal's command).
@Suite("Pairing commands")
struct PairingCommandTests {
    /// A store on `$SYNC` opened by device a, its roster sealed by a; returns the recovery key's words.
    static func sealed(_ sandbox: Sandbox) throws -> String {
        try sandbox.ok("kvfs set k v --sync-dir $SYNC --state-dir $T/s-a && kvfs set k2 v --sync-dir $SYNC --state-dir $T/s-b")
        let membership = Membership(syncDirectory: URL(fileURLWithPath: sandbox.path + "/sync"),
                                    stateDirectory: URL(fileURLWithPath: sandbox.path + "/s-a"))
        return try membership.seal(deviceName: "a").words
    }

    /// Runs `kvfs pair` on a in the background, types its code into `kvfs join` on b, and waits for both.
    static let pairAB = #"""
        kvfs pair --sync-dir $SYNC --state-dir $T/s-a --timeout 60 > $T/pair.out 2>&1 &
        pair=$!
        until [ "$(wc -l < $T/pair.out)" -ge 2 ]; do sleep 0.1; done
        sed -n 2p $T/pair.out | kvfs join --sync-dir $SYNC --state-dir $T/s-b --device-name b
        wait $pair; echo "pair: $?"
        sed 1,2d $T/pair.out
        """#

    @Test("kvfs pair shows a 16-word code; kvfs join with it makes the machine a member; retire --revoke takes it out")
    func pairJoinRevoke() throws {
        try withSandbox { sandbox in
            _ = try Self.sealed(sandbox)
            let output = try sandbox.ok(Self.pairAB)
            let id = try sandbox.ok("cat $T/s-b/device-id").trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(output == "joined: this machine is a member of the sealed store (roster version 2)\npair: 0\npaired b (\(id))\n", "\(output)")
            #expect(try sandbox.ok("sed -n 2p $T/pair.out | wc -w; stat -c %a $T/s-b/device.key; ls $SYNC/pairing | wc -l") == "16\n600\n0\n")
            // A code serves once: typed again, nobody answers.
            let again = try sandbox.run("sed -n 2p $T/pair.out | kvfs join --sync-dir $SYNC --state-dir $T/s-c --timeout 1")
            #expect(again.status == 1 && again.error == "Error: timed out waiting for the member's answer (is kvfs pair still running there, with this code?)\n", "\(again)")
            let revoked = try sandbox.ok("kvfs retire \(id) --revoke --force --sync-dir $SYNC --state-dir $T/s-a")
            #expect(revoked.hasSuffix("revoked b (\(id)): the store moved to epoch 2, whose key it does not have\n"), "\(revoked)")
            #expect(try sandbox.ok("ls $SYNC/roster | wc -l") == "3\n")
        }
    }

    @Test("wrong words, a code typed on a plain store's machine, and --revoke on a plain store are refused with one line")
    func refusals() throws {
        try withSandbox { sandbox in
            let plain = try sandbox.run("kvfs set k v $S && kvfs retire nobody --revoke $S")
            #expect(plain.status == 64 && plain.error.hasPrefix("Error: --revoke is for a sealed store; this one is not"), "\(plain)")
            let typo = try sandbox.run("echo 'apple apple banana' | kvfs join $S --timeout 1")
            #expect(typo.status == 1 && typo.error == "Error: \"banana\" is not one of the code's words: check what you typed\n", "\(typo)")
            let notMember = try sandbox.run("kvfs pair $S --timeout 1")
            #expect(notMember.status == 1 && notMember.error == "Error: the store at \(sandbox.path)/sync is not sealed\n", "\(notMember)")
            let badTimeout = try sandbox.run("kvfs pair $S --timeout 0")
            #expect(badTimeout.status == 64, "\(badTimeout)")
        }
    }

    @Test("kvfs join --recovery-key joins a new machine with the recovery key alone")
    func recoveryKey() throws {
        try withSandbox { sandbox in
            let words = try Self.sealed(sandbox)
            try sandbox.ok("rm -rf $T/s-a")  // every machine lost
            let wrong = try sandbox.run("echo '\(words.split(separator: " ").reversed().joined(separator: " "))' | kvfs join --recovery-key --sync-dir $SYNC --state-dir $T/s-c")
            #expect(wrong.status == 1 && wrong.error.contains("has no roster this recovery key sealed"), "\(wrong)")
            let output = try sandbox.ok("echo '\(words)' | kvfs join --recovery-key --sync-dir $SYNC --state-dir $T/s-c --device-name c")
            #expect(output == "joined: this machine is a member of the sealed store (roster version 2)\n")
        }
    }
}
