import Foundation
import Testing

/// docs/files.md § File semantics and § Keys and file names: editors and everyday
/// tools on a real mount.
@Suite("Editors and tools on a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct ToolTests {
    @Test("vim -es and sed -i edit a key and leave no stray keys (swap, backup or temp files)")
    func editors() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                printf 'banana\nalpha\n' > $M/v
                vim -es -u NONE -i NONE -c '%s/a/b/' -c 'wq' $M/v; echo "vim -u NONE: $?"; bytes $M/v
                vim -es -i NONE -c '%s/b/c/' -c 'wq' $M/v; echo "vim: $?"; bytes $M/v
                vim -es -i NONE -c 'set backupcopy=no writebackup' -c '%s/c/d/' -c 'wq' $M/v; echo "vim, rename to backup: $?"; bytes $M/v
                sed -i 's/d/e/' $M/v; echo "sed -i: $?"; bytes $M/v
                xtype $M/v
                ls -a $M
                kvfs ls $S
                jq -c .keys $M/.kvfs/status
                """#)
            #expect(output == #"""
                vim -u NONE: 0
                b'bbnana\nblpha\n'
                vim: 0
                b'cbnana\nclpha\n'
                vim, rename to backup: 0
                b'dbnana\ndlpha\n'
                sed -i: 0
                b'ebnana\nelpha\n'
                string
                .
                ..
                .kvfs
                v
                v
                {"limit":1024,"used":1}

                """#)
        }
    }

    @Test("mv renames and replaces atomically; mv -n and RENAME_NOREPLACE keep the target; rm removes")
    func renameAndRemove() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                echo one > $M/a; echo two > $M/b
                mv $M/a $M/c; ls $M | tr '\n' ' '; bytes $M/c
                mv $M/c $M/b; ls $M | tr '\n' ' '; bytes $M/b
                echo three > $M/a
                mv -n $M/a $M/b; bytes $M/a $M/b
                python3 -c 'import ctypes, os, sys
                libc = ctypes.CDLL(None, use_errno=True)
                r = libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 1)
                print("RENAME_NOREPLACE:", r, os.strerror(ctypes.get_errno()) if r else "")' $M/a $M/b
                bytes $M/a $M/b
                rm $M/a; echo "rm: $?"; ls $M
                rm $M/missing 2>&1; echo "rm missing: $?"
                kvfs ls $S
                """#)
            #expect(output == #"""
                b c b'one\n'
                b b'one\n'
                b'three\n'
                b'one\n'
                RENAME_NOREPLACE: -1 File exists
                b'three\n'
                b'one\n'
                rm: 0
                b
                rm: cannot remove '\#(sandbox.mountPoint)/missing': No such file or directory
                rm missing: 1
                b

                """#)
        }
    }

    @Test("an empty file created or truncated is there for mv, rm and setfattr at once; one unlinked while open never appears")
    func emptyFilesRightAfterClose() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                failures=0
                for i in $(seq 1 40); do
                    : > $M/tmp && mv $M/tmp $M/k$i || failures=$((failures + 1))
                    echo full > $M/t; : > $M/t && mv $M/t $M/u$i || failures=$((failures + 1))
                    touch $M/x && setfattr -n user.kvfs.type -v data $M/x && rm $M/x || failures=$((failures + 1))
                done
                echo "failures: $failures"
                bytes $M/k40 $M/u40
                python3 -c 'import os, sys
                fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                os.unlink(sys.argv[1])
                os.close(fd)' $M/.probe.swpx
                sleep 0.2
                ls -a $M | grep -c -e probe -e tmp -e '^x$' -e '^t$'
                kvfs ls $S | wc -l
                """#)
            #expect(output == "failures: 0\nb''\nb''\n0\n80\n")
        }
    }

    @Test("touch creates an empty key and keeps an existing value; chmod, chown, touch -d, cp -p and tar -x succeed")
    func metadataChanges() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                touch $M/t; echo "touch new: $?"; bytes $M/t; xtype $M/t
                echo keep > $M/k; before=$(stat -c %Y $M/k)
                sleep 1.1
                touch $M/k; echo "touch: $?"
                chmod 600 $M/k; echo "chmod: $?"
                if [ "$(id -u)" = 0 ]; then chown 1:1 $M/k; else chown "$(id -u)" $M/k; fi; echo "chown: $?"
                touch -d 2001-02-03 $M/k; echo "touch -d: $?"
                bytes $M/k; stat -c '%s %a' $M/k
                [ "$(stat -c %u:%g $M/k)" = "$(id -u):$(id -g)" ] && echo "owner unchanged"
                [ "$(stat -c %Y $M/k)" = "$before" ] && echo "mtime is still the last write's"
                cp -p $M/k $M/k2; echo "cp -p within: $?"; bytes $M/k2
                echo src > src; chmod 640 src; cp -p src $M/k3; echo "cp -p in: $?"; bytes $M/k3
                mkdir tree; echo a > tree/ta; printf 'b\n' > tree/tb; tar -cf t.tar -C tree ta tb
                tar -xf t.tar -C $M; echo "tar -x: $?"; bytes $M/ta $M/tb
                kvfs ls $S | tr '\n' ' '; echo
                """#)
            #expect(output == #"""
                touch new: 0
                b''
                string
                touch: 0
                chmod: 0
                chown: 0
                touch -d: 0
                b'keep\n'
                5 644
                owner unchanged
                mtime is still the last write's
                cp -p within: 0
                b'keep\n'
                cp -p in: 0
                b'src\n'
                tar -x: 0
                b'a\n'
                b'b\n'
                k k2 k3 t ta tb 

                """#)
        }
    }

    @Test("truncate -s and >> append work on the buffer; the result is read back by the rules of docs/files.md")
    func truncateAndAppend() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                kvfs set x abcdef --type data $S
                truncate -s 3 $M/x; bytes $M/x
                truncate -s 5 $M/x; bytes $M/x
                printf 'z' >> $M/x; bytes $M/x; xtype $M/x
                echo one > $M/s
                # "on" is a string, and a string's file shows one \n after it
                truncate -s 2 $M/s; bytes $M/s
                echo more >> $M/s; bytes $M/s
                truncate -s 0 $M/s; bytes $M/s; size $M/s
                truncate -s 4 $M/new; bytes $M/new
                kvfs set i 5 --type integer $S
                pywrite $M/i '0' append; bytes $M/i
                pywrite $M/i '0\n' append; bytes $M/i
                """#)
            #expect(output == #"""
                b'abc'
                b'abc\x00\x00'
                b'abc\x00\x00z'
                data
                b'on\n'
                b'on\nmore\n'
                b''
                0
                b'\x00\x00\x00\x00\n'
                close: EINVAL
                b'5\n'
                close: EINVAL
                b'5\n'

                """#)
        }
    }

    @Test("the store is flat: mkdir, mknod and symlink fail with EPERM")
    func flat() throws {
        try withMount { sandbox in
            let result = try sandbox.run(#"""
                mkdir $M/d; echo "mkdir: $?"
                mkfifo $M/f; echo "mkfifo: $?"
                ln -s target $M/l; echo "ln -s: $?"
                ls -a $M | tr '\n' ' '
                """#)
            #expect(result.output == "mkdir: 1\nmkfifo: 1\nln -s: 1\n. .. .kvfs ")
            #expect(result.error == """
                mkdir: cannot create directory ‘\(sandbox.mountPoint)/d’: Operation not permitted
                mkfifo: cannot create fifo '\(sandbox.mountPoint)/f': Operation not permitted
                ln: failed to create symbolic link '\(sandbox.mountPoint)/l': Operation not permitted

                """)
        }
    }

    @Test("keys that cannot be file names are escaped: a/b is a%2Fb, and back")
    func escapedNames() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                kvfs set 'a/b' x $S
                kvfs set '%2F' percent $S
                kvfs set '.kvfs' control $S
                kvfs set '..' dots $S
                echo y > $M/c%2Fd
                ls -a $M | tr '\n' ' '; echo
                bytes $M/a%2Fb $M/%252F $M/%2Ekvfs $M/%2E.
                kvfs get c/d $S
                kvfs ls $S | tr '\n' ' '; echo
                """#)
            #expect(output == #"""
                %252F %2E. %2Ekvfs . .. .kvfs a%2Fb c%2Fd 
                b'x\n'
                b'percent\n'
                b'control\n'
                b'dots\n'
                y
                %2F .. .kvfs a/b c/d 

                """#)
        }
    }

    @Test("scratch files (the default patterns, --scratch and -o scratch=) stay on their mount, uncounted, until renamed onto a key")
    func scratchPatterns() throws {
        try withSandbox { sandbox in
            try sandbox.mount("m", state: "state", options: "--scratch '*.tmp'")
            try sandbox.mount("n", state: "state2", options: "-o 'scratch=*.bak'")
            let output = try sandbox.ok(#"""
                for name in .v.swp v~ 4913 .#v '#v#' v.tmp; do echo scratch > "$M/$name"; done
                echo other > $T/n/v.bak; echo key > $M/v.bak
                sleep 0.3
                echo "m: $(ls -a $M | LC_ALL=C sort | tr '\n' ' ')"
                echo "n: $(ls -a $T/n | LC_ALL=C sort | tr '\n' ' ')"
                echo "keys: $(kvfs ls $S | tr '\n' ' ') $(jq -c .keys $M/.kvfs/status)"
                mv $M/v.tmp $M/v; sleep 0.3
                bytes $T/n/v
                """#)
            #expect(output == #"""
                m: #v# . .#v .. .kvfs .v.swp 4913 v.bak v.tmp v~ 
                n: . .. .kvfs v.bak 
                keys: v.bak  {"limit":1024,"used":1}
                b'scratch\n'

                """#)
        }
    }
}
