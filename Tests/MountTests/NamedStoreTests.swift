import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 16 items 1–3: every place that opens a store names one by its
/// identifier (`--store ID`, `-o store=ID`), each store is the folder of that
/// name in the sync root `$XDG_DATA_HOME/kvfs/`, and `kvfs stores` lists them.
@Suite("Stores by identifier", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct NamedStoreTests {
    @Test("--store ID on get, set, rm, ls, status, devices, retire and changes: each store is its own folder in the root, apart from the others")
    func everyCommandNamesAStore() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                A="--store com.example.a" B="--store com.example.b"
                kvfs set theme dark $A && kvfs set theme light $B && kvfs set only-b 1 $B
                kvfs get theme $A; kvfs get theme $B
                kvfs get theme 2>&1; echo "default: $?"
                kvfs ls $A; echo --; kvfs ls $B; echo --
                kvfs rm only-b $B && kvfs ls $B
                kvfs status --json $A | jq -r .syncDirectory | sed "s|$T|T|"
                ls $XDG_DATA_HOME/kvfs
                # A second device of store a (its own state directory) writes; retire it through --store.
                kvfs set other x $A --state-dir $T/other
                other=$(kvfs devices --json $A | jq -r '.[] | select(.state != "this") | .id')
                kvfs devices --json $B | jq length
                kvfs retire "$other" --force $A | grep -c 'retired'
                kvfs devices --json $A | jq -r '.[] | select(.id == "'$other'") | .state'
                kvfs get other $A
                # Its write reached this device as another device's: in store a's change log, not b's.
                kvfs set later y $A --state-dir $T/other2
                kvfs set mine z $A
                kvfs changes $A | jq -c .keys | grep -c later
                kvfs changes $B | grep -c later || true
                """#)
            #expect(output == """
                dark
                light
                Error: no such key 'theme'
                default: 1
                theme
                --
                only-b
                theme
                --
                theme
                T/home/data/kvfs/com.example.a
                com.example.a
                com.example.b
                1
                1
                retired
                x
                1
                0

                """)
        }
    }

    @Test("a mount of store a shows only a's keys; get --store b does not see them, get --store a reads them through the mount")
    func aMountShowsOneStore() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                kvfs set only-b 1 --store com.example.b
                kvfs mount $M --store com.example.a && echo dark > $M/theme
                ls $M
                kvfs get theme --store com.example.a
                kvfs get theme --store com.example.b 2>&1
                kvfs ls --store com.example.b
                kvfs status --store com.example.a | grep -c 'the daemon answered'
                jq -r .syncDirectory $M/.kvfs/status | sed "s|$T|T|"
                kvfs unmount $M
                """#)
            #expect(output == """
                theme
                dark
                Error: no such key 'theme'
                only-b
                1
                T/home/data/kvfs/com.example.a

                """)
        }
    }

    @Test("a bad identifier, and --store with --sync-dir, are refused with one line and status 64, by every command")
    func refusals() throws {
        try withSandbox { sandbox in
            for command in ["get k", "set k v", "rm k", "ls", "status", "devices", "retire x", "changes", "mount $M"] {
                let bad = try sandbox.run("kvfs \(command) --store com/example")
                #expect(bad.status == 64 && bad.output.isEmpty, "\(command): \(bad)")
                #expect(bad.error == "Error: 'com/example' is not a store identifier: '/' is not allowed (use 1 to 155 letters, digits, '-', '_' and '.', as in com.example.notes)\n",
                        "\(command): \(bad)")
                let both = try sandbox.run("kvfs \(command) --store com.example.a --sync-dir $SYNC")
                #expect(both.status == 64 && both.error.split(separator: "\n").count == 1 && both.error.contains("--store and --sync-dir"),
                        "\(command): \(both)")
            }
            let option = try sandbox.run("kvfs mount $M -o store=.hidden")
            #expect(option.status == 64 && option.error.hasPrefix("Error: '.hidden' is not a store identifier: it must start with a letter or a digit"),
                    "\(option)")
            #expect(!sandbox.isMounted(sandbox.mountPoint))
            #expect(try sandbox.ok("ls $XDG_DATA_HOME/kvfs 2>/dev/null | wc -l") == "0\n")
        }
    }

    @Test("fstab's form with -o store=ID: the first field is the root that holds the store")
    func fstabStoreOption() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                kvfs $XDG_DATA_HOME/kvfs $M -o store=com.example.a,state_dir=$STATE,nofail && echo mounted
                grep " $M " /proc/mounts | cut -d' ' -f1 | sed "s|$T|T|"
                echo dark > $M/theme
                kvfs unmount $M
                kvfs get theme --store com.example.a
                ls $XDG_DATA_HOME/kvfs
                kvfs mount $M --store com.example.a -o store=com.example.b 2>&1; echo "status $?"
                """#)
            #expect(output == """
                mounted
                kvfs:T/home/data/kvfs/com.example.a
                dark
                com.example.a
                Error: --store and -o store= name a store each; give one
                status 64

                """)
        }
    }

    @Test("mount -t fuse.kvfs ROOT MOUNTPOINT -o store=ID (what an fstab line with store= runs)",
          .enabled(if: access("/sbin/mount.fuse3", X_OK) == 0, "/sbin/mount.fuse3 is not installed"),
          .enabled(if: geteuid() == 0, "mount(8) needs root"))
    func mountHelperWithStore() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                /sbin/mount.fuse3 $XDG_DATA_HOME/kvfs $M -t fuse.kvfs -o store=com.example.notes,state_dir=$STATE && echo mounted
                echo hello > $M/k
                kvfs unmount $M
                kvfs get k --store com.example.notes
                """#)
            #expect(output == "mounted\nhello\n")
        }
    }

    @Test("two devices share one sync root: the stores one makes appear on the other, each mount showing its own store's keys; sealed, two lists them before it is a member, their keys unknown")
    func storesSyncThroughTheRoot() throws {
        try withSandbox { sandbox in
            let keys = sandbox.sealing == .plain ? "1" : "-"  // only a member reads a sealed store's keys
            // Two devices of one user: one root ($XDG_DATA_HOME/kvfs), two state directories.
            let output = try sandbox.ok(#"""
                one() { XDG_STATE_HOME=$T/state-one "$@"; }
                two() { XDG_STATE_HOME=$T/state-two "$@"; }
                mkdir -p $T/m1 $T/m2
                one kvfs mount $T/m1 --store com.example.notes && echo dark > $T/m1/theme
                one kvfs set volume 11 --type integer --store com.example.todo
                two kvfs stores | awk '{ print $1, $2, $4 }'
                two kvfs mount $T/m2 --store com.example.notes
                ls $T/m2; cat $T/m2/theme
                two kvfs get volume --store com.example.todo
                echo light > $T/m2/theme
                n=0; until [ "$(cat $T/m1/theme)" = light ]; do n=$((n + 1)); [ $n -lt 100 ] || break; sleep 0.05; done
                cat $T/m1/theme; ls $T/m1
                two kvfs unmount $T/m2; one kvfs unmount $T/m1
                """#)
            #expect(output == """
                STORE KEYS DEVICES
                com.example.notes \(keys) 1
                com.example.todo \(keys) 1
                theme
                dark
                11
                light
                theme

                """)
        }
    }

    @Test("kvfs stores lists each store of the root with its keys, bytes, devices and last write; --json for jq")
    func storesListsTheRoot() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                kvfs stores; echo "empty: $?"
                kvfs set theme dark --store com.example.a
                kvfs set volume 11 --type integer --store com.example.a --state-dir $T/second
                kvfs set k v
                mkdir -p $XDG_DATA_HOME/kvfs/.stfolder $XDG_DATA_HOME/kvfs/not-yet
                kvfs mount $M --store com.example.b && echo '<plist><array/></plist>' > $M/list
                kvfs stores | sed -E 's/20[0-9]{2}-[0-9-]+T[0-9:.]+Z/TIME/'
                kvfs stores --json | jq -c '.[] | [.identifier, .keys, .bytes, .devices, (.lastWrite | type), (.syncDirectory | sub(env.T; "T"))]'
                kvfs unmount $M
                """#)
            #expect(output == """
                STORE  KEYS  BYTES  DEVICES  LAST-WRITE
                empty: 0
                STORE          KEYS  BYTES  DEVICES  LAST-WRITE
                com.example.a  2     8      2        TIME
                com.example.b  1     182    1        TIME
                default        1     2      1        TIME
                ["com.example.a",2,8,2,"string","T/home/data/kvfs/com.example.a"]
                ["com.example.b",1,182,1,"string","T/home/data/kvfs/com.example.b"]
                ["default",1,2,1,"string","T/home/data/kvfs/default"]

                """)
        }
    }
}
