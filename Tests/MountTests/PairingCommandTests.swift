import Foundation
import KVStore
import Testing

/// `kvfs pair`, `kvfs join` and `kvfs retire --revoke` driven as a person would, on one sync directory
/// (docs/command-line.md, docs/sealed.md § Pairing, § Revocation): the code `kvfs pair` prints is typed
/// into `kvfs join`. The store is sealed with `kvfs seal`.
@Suite("Sealing and pairing commands")
struct PairingCommandTests {
    /// A new store on `$SYNC`, sealed by device a with `kvfs seal`; returns the recovery key's words.
    static func sealed(_ sandbox: Sandbox) throws -> String {
        let output = try sandbox.ok("kvfs seal --sync-dir $SYNC --state-dir $T/s-a --device-name a")
        let lines = output.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("sealed: this machine is the store's first member"), "\(output)")
        return String(lines.last ?? "")
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
        try withSandbox(.plain) { sandbox in
            _ = try Self.sealed(sandbox)
            let output = try sandbox.ok(Self.pairAB)
            let id = try sandbox.ok("cat $T/s-b/device-id").trimmingCharacters(in: .whitespacesAndNewlines)
            // Now a member, b writes (sealed) and reads what a wrote.
            try sandbox.ok("kvfs set k2 from-b --sync-dir $SYNC --state-dir $T/s-b")
            #expect(try sandbox.ok("kvfs get k2 --sync-dir $SYNC --state-dir $T/s-a") == "from-b\n")
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
        try withSandbox(.plain) { sandbox in
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
        try withSandbox(.plain) { sandbox in
            let words = try Self.sealed(sandbox)
            try sandbox.ok("rm -rf $T/s-a")  // every machine lost
            let wrong = try sandbox.run("echo '\(words.split(separator: " ").reversed().joined(separator: " "))' | kvfs join --recovery-key --sync-dir $SYNC --state-dir $T/s-c")
            #expect(wrong.status == 1 && wrong.error.contains("has no roster this recovery key sealed"), "\(wrong)")
            let output = try sandbox.ok("echo '\(words)' | kvfs join --recovery-key --sync-dir $SYNC --state-dir $T/s-c --device-name c")
            #expect(output == "joined: this machine is a member of the sealed store (roster version 2)\n")
        }
    }

    @Test("kvfs seal seals a new store once; a store with values and a sealed one are refused; a machine that is no member writes nothing")
    func seal() throws {
        try withSandbox(.plain) { sandbox in
            let other = "--sync-dir $T/other --state-dir $T/s-o"
            let withValues = try sandbox.run("kvfs set k v \(other) && kvfs seal \(other)")
            #expect(withValues.status == 1 && withValues.error.contains("holds values already") && withValues.error.contains("kvfs export"), "\(withValues)")
            #expect(try sandbox.ok("ls $T/other") == "devices\nstore-id\n")
            let words = try Self.sealed(sandbox)
            #expect(words.split(separator: " ").count == 32)
            let again = try sandbox.run("kvfs seal --sync-dir $SYNC --state-dir $T/s-a")
            #expect(again.status == 1 && again.error.contains("is sealed already"), "\(again)")
            // The sealer writes sealed records; a machine that is no member is refused, and writes nothing.
            try sandbox.ok("kvfs set secret-key secret-value --sync-dir $SYNC --state-dir $T/s-a")
            #expect(try sandbox.ok("kvfs get secret-key --sync-dir $SYNC --state-dir $T/s-a") == "secret-value\n")
            #expect(try sandbox.run("grep -rqF -e secret-key -e secret-value $SYNC").status == 1)
            let before = try sandbox.ok("find $SYNC -type f | sort | xargs md5sum")
            let stranger = try sandbox.run("kvfs set k2 v --sync-dir $SYNC --state-dir $T/s-x")
            #expect(stranger.status != 0 && stranger.error.contains("not a member"), "\(stranger)")
            #expect(try sandbox.ok("find $SYNC -type f | sort | xargs md5sum") == before)
        }
    }
}
