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
    static let pairAB = pair(member: "--sync-dir $SYNC --state-dir $T/s-a")

    /// Runs `kvfs pair` on the member the options `member` name in the background, types its code into
    /// `kvfs join` on b (state `$T/s-b`), waits for both, and prints what each said.
    static func pair(member: String) -> String {
        """
        kvfs pair \(member) --timeout 60 > $T/pair.out 2>&1 &
        pair=$!
        until [ "$(wc -l < $T/pair.out)" -ge 2 ]; do sleep 0.1; done
        sed -n 2p $T/pair.out | kvfs join --sync-dir $SYNC --state-dir $T/s-b --device-name b
        wait $pair; echo "pair: $?"
        sed 1,2d $T/pair.out
        """
    }

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

    @Test("kvfs recovery-key --rotate, given the key in force, prints a new key once; the old one joins no machine and rotates nothing, the new one joins")
    func recoveryKeyRotation() throws {
        try withSandbox(.plain) { sandbox in
            let old = try Self.sealed(sandbox)
            let rotated = try sandbox.ok("echo '\(old)' | kvfs recovery-key --rotate --sync-dir $SYNC --state-dir $T/s-a").split(separator: "\n")
            #expect(rotated.count == 2 && rotated[0].hasPrefix("rotated: the store's new recovery key, shown this once (the old one opens nothing from epoch 2 on)"),
                    "\(rotated)")
            let new = String(rotated.last ?? "")
            #expect(new.split(separator: " ").count == 32 && new != old)
            let again = try sandbox.run("echo '\(old)' | kvfs recovery-key --rotate --sync-dir $SYNC --state-dir $T/s-a")
            #expect(again.status == 1 && again.error.contains("not the store's recovery key"), "\(again)")
            let unflagged = try sandbox.run("kvfs recovery-key --sync-dir $SYNC --state-dir $T/s-a")
            #expect(unflagged.status == 64, "\(unflagged)")
            let stale = try sandbox.run("echo '\(old)' | kvfs join --recovery-key --sync-dir $SYNC --state-dir $T/s-c")
            #expect(stale.status == 1 && stale.error.contains("no longer has this recovery key"), "\(stale)")
            #expect(try sandbox.ok("echo '\(new)' | kvfs join --recovery-key --sync-dir $SYNC --state-dir $T/s-c --device-name c")
                    == "joined: this machine is a member of the sealed store (roster version 3)\n")
            #expect(try sandbox.ok("kvfs status --json --sync-dir $SYNC --state-dir $T/s-c | jq -c '[.sealed.epoch, ([.sealed.members[].name] | sort), .sealed.recoveryKey]'")
                    == "[2,[\"a\",\"c\"],true]\n")
            #expect(try sandbox.ok("kvfs status --sync-dir $SYNC --state-dir $T/s-c | grep '^sealed:'").hasPrefix("sealed:     yes, roster version 3, epoch 2; members: "))
        }
    }

    @Test("kvfs seal seals a new store once; a sealed one is refused; a machine that is no member writes nothing")
    func seal() throws {
        try withSandbox(.plain) { sandbox in
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

    @Test("kvfs seal converts a store with values by compaction: every value written through the mount reads back through it, grep -r finds none, and a plain machine joins to see them")
    func sealConverts() throws {
        try withSandbox(.plain) { sandbox in
            try sandbox.mount()
            try sandbox.ok("""
                echo secret-one > $M/key-one && echo secret-one-again > $M/key-one && echo secret-two > $M/key-two
                echo secret-gone > $M/key-gone && rm $M/key-gone
                kvfs set key-b secret-b --sync-dir $SYNC --state-dir $T/s-b
                sleep 1; kvfs unmount $M
                """)
            let output = try sandbox.ok("kvfs seal $S --device-name a")
            let lines = output.split(separator: "\n")
            #expect(lines.count == 3 && lines[0].hasPrefix("sealed: ") && lines[1].split(separator: " ").count == 32, "\(output)")
            #expect(lines.last?.hasPrefix("kept ") == true && lines.last?.contains("1 values and 0 removals") == true
                    && lines.last?.contains("its plain folder is removed. It is no member: run kvfs pair here and kvfs join there") == true, "\(output)")
            let written = ["key-one", "secret-one", "secret-one-again", "key-two", "secret-two", "key-gone", "secret-gone", "key-b", "secret-b"]
            for text in written { #expect(try sandbox.run("grep -r -l -a -F -e '\(text)' $SYNC").status == 1, "\(text) is still readable") }
            // b, a machine of the plain store, is no member of the sealed one: refused, and it writes nothing.
            let before = try sandbox.ok("find $SYNC -type f | sort | xargs md5sum")
            let refused = try sandbox.run("kvfs status --sync-dir $SYNC --state-dir $T/s-b")
            #expect(refused.status != 0 && refused.error.contains("not a member"), "\(refused)")
            #expect(try sandbox.ok("find $SYNC -type f | sort | xargs md5sum") == before)

            try sandbox.mount()
            #expect(try sandbox.ok("cat $M/key-one $M/key-two $M/key-b; ls $M") == "secret-one-again\nsecret-two\nsecret-b\nkey-b\nkey-one\nkey-two\n")
            #expect(try sandbox.ok("kvfs history key-one $S | grep -c secret-one") == "2\n", "history is kept")
            #expect(try sandbox.ok(Self.pair(member: "$S")).contains("pair: 0\npaired b ("))
            #expect(try sandbox.ok("kvfs get key-one --sync-dir $SYNC --state-dir $T/s-b; kvfs get key-b --sync-dir $SYNC --state-dir $T/s-b")
                    == "secret-one-again\nsecret-b\n")
            for text in written { #expect(try sandbox.run("grep -r -l -a -F -e '\(text)' $SYNC").status == 1, "\(text) is still readable") }
        }
    }

    @Test("kvfs seal refuses while another machine's mount runs; with --force, that mount writes nothing more once it sees the roster, loses nothing, and joins")
    func sealWhileAnotherMounted() throws {
        try withSandbox(.plain) { sandbox in
            try sandbox.ok("kvfs set key-a secret-a $S")
            try sandbox.mount("mb", state: "s-b")
            try sandbox.ok("echo secret-b > $T/mb/key-b")
            let refused = try sandbox.run("kvfs seal $S --device-name a")
            #expect(refused.status == 1 && refused.error.contains("cannot seal the store yet") && refused.error.contains("looks alive"), "\(refused)")
            #expect(try sandbox.ok("ls $SYNC") == "devices\nstore-id\n")
            let output = try sandbox.ok("kvfs seal $S --device-name a --force")
            #expect(output.contains("its folder is left until it joins") && output.contains("its mount writes nothing more once it sees the store sealed"), "\(output)")
            // Writes go on until b's mount sees the roster (within a second or two), then each is refused.
            let writes = try sandbox.ok("""
                for i in $(seq 100); do r=$(pywrite $T/mb/key-late late-value-$i); [ "$r" = ok ] || { echo "$i $r"; break; }; sleep 0.1; done
                """)
            let fields = writes.split(separator: " ", maxSplits: 1)
            #expect(fields.count == 2 && fields[1] == "close: EACCES\n", "\(writes)")
            let lastWritten = (Int(fields.first ?? "") ?? 1) - 1
            #expect(try sandbox.ok("kvfs status --sync-dir $SYNC --state-dir $T/s-b").contains("this device writes nothing more"))
            try sandbox.ok("kvfs unmount $T/mb")
            #expect(try sandbox.ok(Self.pair(member: "$S")).contains("pair: 0\npaired b ("))
            try sandbox.mount("mb", state: "s-b")
            #expect(try sandbox.ok("cat $T/mb/key-a $T/mb/key-b") == "secret-a\nsecret-b\n")
            let late = try sandbox.run("kvfs get key-late $S")
            #expect(lastWritten == 0 ? late.status != 0 : late.output == "late-value-\(lastWritten)\n", "what b wrote before it saw the roster is kept: \(late)")
            try sandbox.ok("kvfs unmount $T/mb")
            for text in ["key-a", "secret-a", "key-b", "secret-b", "key-late", "late-value"] {
                #expect(try sandbox.run("grep -r -l -a -F -e '\(text)' $SYNC").status == 1, "\(text) is still readable")
            }
        }
    }

    /// Each member of the newest roster version: `ROLE NAME ID SIGNING-KEY`, from its bytes (docs/sealed.md § Roster).
    static let rosterMembers = #"""
        python3 -c 'import os, sys
        d = sys.argv[1]; b = open(os.path.join(d, sorted(os.listdir(d))[-1]), "rb").read()
        i = 10 + b[9] + 8 + 32 + 4; count = int.from_bytes(b[i:i + 2], "little"); i += 2
        for _ in range(count):
            role, device = b[i], b[i + 1:i + 17].hex(); i += 17
            name = b[i + 1:i + 1 + b[i]].decode(); i += 1 + b[i]
            print(role, name, device, b[i:i + 32].hex()); i += 32 + 32 + 92' $SYNC/roster
        """#

    @Test("a copy of a member's state directory (cp -a), mounted beside it, is refused in one line naming the original and writes nothing; paired (after that, or before it ever opened the store), it is a new member signing with keys of its own, both read each other's writes, and the original is unaffected")
    func copiedStateDirectory() throws {
        try withSandbox(.plain) { sandbox in
            _ = try Self.sealed(sandbox)
            try sandbox.mount("m", state: "s-a")
            try sandbox.ok("echo from-a > $M/k1")
            let (aID, aKey) = (try sandbox.ok("cat $T/s-a/device-id"), try sandbox.ok("md5sum < $T/s-a/device.key"))
            let syncBefore = try sandbox.ok("ls $SYNC/devices $SYNC/roster")
            try sandbox.ok("cp -a $T/s-a $T/s-b")
            let line = "\(sandbox.path)/s-b is a copy of the state directory of device a (\(aID.dropLast())), a member of the sealed store at \(sandbox.syncDirectory): a copy is a new device, which reads and writes nothing there until it pairs (kvfs pair on a member, kvfs join here)"
            // Read before it ever wrote (its id still the original's), as a mount, and read again (its id its own now).
            for (script, said) in [("kvfs status --sync-dir $SYNC --state-dir $T/s-b", ""),
                                   ("mkdir $T/m2 && kvfs mount $T/m2 --sync-dir $SYNC --state-dir $T/s-b", "cannot mount \(sandbox.path)/m2: "),
                                   ("kvfs get k1 --sync-dir $SYNC --state-dir $T/s-b", "")] {
                let refused = try sandbox.run(script)
                #expect(refused.status == 1 && refused.error == "Error: \(said)\(line)\n", "\(script): \(refused)")
            }
            #expect(try sandbox.ok("grep -cF '\(line)' $T/s-b/daemon.log") == "1\n")
            #expect(try sandbox.ok("ls $SYNC/devices $SYNC/roster") == syncBefore, "the copy wrote in the sync directory")
            #expect(!sandbox.isMounted(sandbox.path + "/m2"))

            // Paired (kvfs pair on the original, kvfs join on the copy), it mounts as a member of its own.
            let paired = try sandbox.ok(Self.pair(member: "--sync-dir $SYNC --state-dir $T/s-a"))
            let bID = try sandbox.ok("cat $T/s-b/device-id")
            #expect(bID != aID && paired.hasSuffix("paired b (\(bID.dropLast()))\n"), "\(paired)")
            try sandbox.mount("m2", state: "s-b")
            try sandbox.ok("echo from-b > $T/m2/k2; echo from-a-again > $M/k3")
            for (mount, key, value) in [("m", "k2", "from-b"), ("m2", "k1", "from-a"), ("m2", "k3", "from-a-again")] {
                #expect(try SharingTests.poll(sandbox, "cat $T/\(mount)/\(key)", until: value + "\n") == value + "\n", "\(mount)/\(key)")
            }
            // A copy that joins before it ever opens the store takes its new id and keys as it joins.
            try sandbox.ok(#"""
                cp -a $T/s-a $T/s-c
                kvfs pair --sync-dir $SYNC --state-dir $T/s-a --timeout 60 > $T/pair-c.out 2>&1 & pair=$!
                until [ "$(wc -l < $T/pair-c.out)" -ge 2 ]; do sleep 0.1; done
                sed -n 2p $T/pair-c.out | kvfs join --sync-dir $SYNC --state-dir $T/s-c --device-name c --timeout 30 > /dev/null
                wait $pair
                """#)
            let cID = try sandbox.ok("cat $T/s-c/device-id")
            #expect(cID != aID && cID != bID)
            #expect(try sandbox.ok("kvfs get k3 --sync-dir $SYNC --state-dir $T/s-c") == "from-a-again\n")
            // The roster names the three, each with its own signing key; m reads b's writes, so they verify under b's.
            let members = try sandbox.ok(Self.rosterMembers).split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            let devices = members.filter { $0.first == "1" }
            let named: [String] = devices.map { $0[1] + " " + $0[2] }
            let ids: [String] = zip(["a", "b", "c"], [aID, bID, cID]).map { $0 + " " + $1.dropLast() }
            #expect(named == ids, "\(members)")
            #expect(Set(devices.map { $0[3] }).count == 3, "\(members)")
            #expect(try sandbox.ok("cmp -s $T/s-a/device.key $T/s-b/device.key || cmp -s $T/s-a/device.key $T/s-c/device.key || echo differ") == "differ\n")
            // The original kept its id and its keys, and warns of nothing.
            #expect(try sandbox.ok("cat $T/s-a/device-id; md5sum < $T/s-a/device.key") == aID + aKey)
            #expect(try sandbox.ok("jq -r '.warnings | length' $M/.kvfs/status $T/m2/.kvfs/status") == "0\n0\n")
        }
    }
}
