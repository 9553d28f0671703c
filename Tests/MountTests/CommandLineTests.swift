import Foundation
import Testing

/// docs/command-line.md: `kvfs get/set/rm/ls/status/changes` with and without
/// a mount, and `kvfs mount`'s errors.
@Suite("The kvfs command", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct CommandLineTests {
    /// The same session of commands, run without a mount and through one.
    static let session = #"""
        kvfs set greeting hello $S; echo "set: $?"
        kvfs set n --type integer $S -- -5; echo "set integer: $?"
        kvfs set t -5 $S; echo "set t -5: $?"; kvfs set t -6 --type integer $S; kvfs get t $S
        printf 'from\nstdin' | kvfs set piped - $S; kvfs get piped $S
        kvfs set volume 11 --type integer $S; kvfs set volume loud $S; echo "set volume loud: $?"
        kvfs set flag yes --type bool $S
        kvfs set list '<plist><array><string>a</string></array></plist>' --type array $S
        kvfs get greeting $S; kvfs get n $S; kvfs get flag $S
        kvfs get list $S | grep -c '<string>a</string>'
        kvfs set n 6 $S; kvfs get n $S
        kvfs set n six $S; echo "set n six: $?"; kvfs get n $S
        kvfs ls $S | tr '\n' ' '; echo
        kvfs rm flag $S; echo "rm: $?"
        kvfs rm flag $S; echo "rm again: $?"
        kvfs get flag $S; echo "get removed: $?"
        kvfs set bad x --type colour $S; echo "bad type: $?"
        kvfs rm t $S; kvfs rm piped $S; kvfs rm volume $S
        kvfs ls $S | tr '\n' ' '; echo
        kvfs status --json $S | jq -c '[.keys.used, .bytes.used, .bytes.limit, (.devices | length)]'
        kvfs status $S | grep -E '^(keys|bytes):'

        """#

    static let sessionOutput = """
        set: 0
        set integer: 0
        set t -5: 0
        -6
        from
        stdin
        set volume loud: 1
        hello
        -5
        true
        1
        6
        set n six: 1
        6
        flag greeting list n piped t volume 
        rm: 0
        rm again: 1
        get removed: 1
        bad type: 64
        greeting list n 
        [3,218,1048576,1]
        keys:       3 of 1024
        bytes:      218 of 1048576

        """

    /// What the session prints on standard error: one line per failed command, the same with a mount or without.
    static let sessionErrors = """
        Error: value for 'volume' refused: 'loud' is not a valid integer
        Error: value for 'n' refused: 'six' is not a valid integer
        Error: no such key 'flag'
        Error: no such key 'flag'
        Error: unknown type 'colour'; use one of: string, integer, real, bool, date, data, array, dictionary

        """

    @Test("get, set, rm, ls and status work on the store without a mount; set KEY - reads standard input; set t -5 needs no --",
          arguments: Sealing.allCases)
    func withoutMount(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            let result = try sandbox.run(Self.session)
            #expect(result.output == Self.sessionOutput, "\(result)")
            #expect(result.error == Self.sessionErrors, "\(result)")
        }
    }

    @Test("the value - itself is set through standard input (printf %s - | kvfs set k -), and a script that passes every value so reads no more of its own input than each value")
    func aDashIsSetThroughStandardInput() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok("""
                printf %s - | kvfs set dash - $S; kvfs get dash $S
                printf 'a\\n-\\nb\\n' > values
                while read -r v; do printf %s "$v" | kvfs set $S -- "k$v" -; done < values
                kvfs get ka $S; kvfs get k- $S; kvfs get kb $S
                """)
            #expect(output == "-\na\n-\nb\n")
        }
    }

    @Test("the same commands go through a running mount, which sees them at once",
          arguments: Sealing.allCases)
    func throughMount(_ sealing: Sealing) throws {
        try withMount(sealing) { sandbox in
            let result = try sandbox.run(Self.session + #"""
                ls $M | tr '\n' ' '; echo
                bytes $M/n $M/greeting; xtype $M/n; xtype $M/list
                [ "$(kvfs status --json $S | jq .pid)" = "$(jq .pid $M/.kvfs/status)" ] && echo "status came from the mount"
                """#)
            #expect(result.output == Self.sessionOutput + """
                greeting list n 
                b'6\\n'
                b'hello\\n'
                integer
                array
                status came from the mount

                """, "\(result)")
            #expect(result.error == Self.sessionErrors, "the daemon's own messages, as without a mount: \(result)")
        }
    }

    @Test("right after a plain fusermount3 -u or umount (the daemon still closing the store), kvfs get waits for it instead of calling the state directory busy")
    func getRightAfterUmount() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                for i in 1 2 3 4 5; do
                    kvfs mount $M $S && echo v$i > $M/k && fusermount3 -u $M && kvfs get k $S
                done
                """#)
            #expect(output == "v1\nv2\nv3\nv4\nv5\n")
        }
    }

    @Test("the daemon leaves the folder it was started from, and unmount works from a folder the user cannot enter",
          .enabled(if: geteuid() == 0, "needs root to run the mount as another user (nobody)"))
    func workingFolders() throws {
        try withSandbox { sandbox in
            // Started from a folder of a disk the user may want to unmount next.
            let cwd = try sandbox.ok("mkdir $T/usb && cd $T/usb && kvfs mount $M $S && readlink /proc/$(cut -d' ' -f2 $STATE/mount.lock)/cwd && kvfs unmount $M")
            #expect(cwd == "/\n")
            // nobody types `kvfs unmount` in /root (0700, root's).
            let result = try sandbox.run(asNobody(fuseMode: "666", """
                as_nobody $d/kvfs mount $d/m --sync-dir $d/sync --state-dir $d/state && cd /root && as_nobody $d/kvfs unmount $d/m && echo unmounted
                """))
            #expect(result.output == "unmounted\n", "\(result)")
        }
    }

    @Test("kvfs ls prints a key with a control character in bash's $'…' quoting, one a line, which kvfs get takes back; other keys as they are",
          arguments: Sealing.allCases)
    func listingQuotesControlCharacters(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            let script = #"""
                kvfs set "$(printf 'two\nlines')" 1 $S; kvfs set "$(printf 'red\033[31m')" 2 $S; kvfs set "it's \\ plain" 3 $S
                kvfs ls $S
                kvfs ls $S | while read -r key; do case $key in "\$'"*) bash -c "kvfs get $key $S" ;; *) kvfs get "$key" $S ;; esac; done
                """#
            let expected = """
                it's \\ plain
                $'red\\x1b[31m'
                $'two\\nlines'
                3
                2
                1

                """
            #expect(try sandbox.ok(script) == expected, "without a mount")
            try sandbox.mount()
            #expect(try sandbox.ok("kvfs ls $S") == expected.split(separator: "\n").prefix(3).map { $0 + "\n" }.joined(), "through the mount")
        }
    }

    @Test("with no --sync-dir the default store under $XDG_DATA_HOME serves, with a mount and without",
          arguments: Sealing.allCases)
    func defaultStore(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            let output = try sandbox.ok(#"""
                kvfs set theme dark; kvfs get theme
                [ -f $XDG_DATA_HOME/kvfs/default/store-id ] && echo "store in XDG_DATA_HOME"
                [ -d $XDG_STATE_HOME/kvfs/default ] && echo "state in XDG_STATE_HOME"
                kvfs mount $M && cat $M/theme
                kvfs set theme light; cat $M/theme; kvfs ls
                kvfs unmount $M && echo unmounted
                kvfs get theme
                """#)
            #expect(output == """
                dark
                store in XDG_DATA_HOME
                state in XDG_STATE_HOME
                dark
                light
                theme
                unmounted
                light

                """)
        }
    }

    @Test("kvfs mount on a mounted, missing or non-folder path, or with a busy state dir: one line, non-zero")
    func mountErrors() throws {
        try withMount { sandbox in
            for (script, message) in [
                ("kvfs mount $M $S", "Error: cannot mount \(sandbox.mountPoint): \(sandbox.mountPoint) is already mounted"),
                ("kvfs mount $T/missing $S", "Error: cannot mount \(sandbox.path)/missing: \(sandbox.path)/missing: No such file or directory"),
                ("touch $T/file; kvfs mount $T/file $S", "Error: cannot mount \(sandbox.path)/file: \(sandbox.path)/file is not a folder"),
                ("mkdir $T/m2; kvfs mount $T/m2 $S", "Error: cannot mount \(sandbox.path)/m2: state directory \(sandbox.stateDirectory) is in use by"),
                ("kvfs unmount $T/m2", "Error: \(sandbox.path)/m2 is not a kvfs mount"),
            ] {
                let result = try sandbox.run(script)
                #expect(result.status != 0, "\(script): \(result)")
                #expect(result.error.split(separator: "\n").count == 1 && result.error.hasPrefix(message), "\(script): \(result)")
                #expect(!sandbox.isMounted(sandbox.path + "/m2"))
            }
            // The original mount still serves.
            #expect(try sandbox.ok("echo still > $M/k; cat $M/k") == "still\n")
        }
    }

    @Test("kvfs mount returns once the mount is ready, even when its output is captured (the daemon keeps no caller's descriptor)")
    func mountReturns() throws {
        try withSandbox { sandbox in
            let result = try sandbox.run(#"""
                # The substitution's pipe is also the command's descriptor 9: were the daemon to keep it, $(…) would never end.
                out=$(kvfs mount $M $S 2>&1 9>&1); echo "mount: $? [$out]"
                cat $M/.kvfs/status | jq -r .syncDirectory
                """#, timeout: 20)
            #expect(result.output == "mount: 0 []\n\(sandbox.syncDirectory)\n", "\(result)")
        }
    }

    @Test("kvfs mount and unmount see their mount while another mount's name is not UTF-8",
          .enabled(if: Privileges.canMountInANamespace, "mounting a tmpfs needs CAP_SYS_ADMIN"))
    func foreignMountNames() throws {
        try withSandbox { sandbox in
            try sandbox.ok(#"mkdir "$T/$(printf 'odd\377')" && mount -t tmpfs kvfs-test "$T/$(printf 'odd\377')""#)
            defer { _ = try? sandbox.run(#"umount "$T/$(printf 'odd\377')""#) }
            let result = try sandbox.run("kvfs mount $M $S && echo mounted; kvfs mount $M $S; echo \"again: $?\"; kvfs unmount $M && echo unmounted")
            #expect(result.output == "mounted\nagain: 1\nunmounted\n", "\(result)")
            #expect(result.error == "Error: cannot mount \(sandbox.mountPoint): \(sandbox.mountPoint) is already mounted\n", "\(result)")
        }
    }

    @Test("kvfs changes prints the change log, and --follow prints new lines as they come",
          arguments: Sealing.allCases)
    func changes(_ sealing: Sealing) throws {
        try withMount(sealing) { sandbox in
            let output = try sandbox.ok(#"""
                kvfs changes $S | wc -c
                head -c 1048577 /dev/zero > $M/big 2>/dev/null
                kvfs changes $S | jq -c '[.seq, .reason, .code, .keys]'
                kvfs changes $S | cmp - $M/.kvfs/changes.log && echo same as changes.log
                kvfs changes --follow $S > followed & follower=$!
                sleep 0.5
                head -c 1048577 /dev/zero > $M/huge 2>/dev/null
                for i in $(seq 1 50); do [ "$(wc -l < followed)" -ge 2 ] && break; sleep 0.1; done
                kill $follower
                jq -c '[.seq, .keys]' followed
                """#)
            #expect(output == """
                0
                [1,"QuotaViolationChange",2,["big"]]
                same as changes.log
                [1,["big"]]
                [2,["huge"]]

                """)
        }
    }
}
