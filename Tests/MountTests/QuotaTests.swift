import Foundation
import Testing

/// docs/files.md § Limits and errors, and the control folder: quota errors through a real mount,
/// each leaving the old state intact, and `df`, `.kvfs/status`, `.kvfs/changes.log`.
@Suite("Quota and control files on a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct QuotaTests {
    @Test("df -B1 shows the byte quota and df -i the key quota, exactly")
    func diskFree() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                echo hello > $M/a; head -c 1000 /dev/urandom > $M/b; kvfs set i 42 --type integer $S; : > $M/e
                df -B1 --output=size,used,avail $M | tail -1 | awk '{print $1, $2, $3}'
                du -sb --exclude=.kvfs $M | cut -f1
                df -i $M | tail -1 | awk '{print $2, $3, $4}'
                ls $M | wc -l
                head -c 1048576 /dev/zero > $M/b 2>/dev/null; rm $M/e
                df -B1 --output=size,used,avail $M | tail -1 | awk '{print $1, $2, $3}'
                df -i $M | tail -1 | awk '{print $2, $3, $4}'
                """#)
            #expect(output == """
                1048576 1009 1047567
                1009
                1024 4 1020
                4
                1048576 1009 1047567
                1024 3 1021

                """)
        }
    }

    @Test(".kvfs/status is valid JSON with the usage; .kvfs is read-only")
    func status() throws {
        try withSandbox { sandbox in
            try sandbox.mount(options: "--device-name desk")
            let result = try sandbox.run(#"""
                echo hello > $M/a; printf 12345 > $M/b
                jq -e . $M/.kvfs/status > /dev/null && echo valid JSON
                jq -c '[.keys, .bytes, .device.name, (.devices | length), .syncDirectory == env.SYNC, .stateDirectory == env.STATE, (.storeID | length > 0), (.pid | type), (.lastSync | type), .setAside]' $M/.kvfs/status
                [ "$(jq .pid $M/.kvfs/status)" = "$(pgrep -f -- "--foreground.*$M|$M.*--foreground" | head -1)" ] && echo pid is the daemon
                ls -l $M/.kvfs | sed 1d | awk '{print $1, $NF}'
                echo x > $M/.kvfs/status; echo "write status: $?"
                rm $M/.kvfs/changes.log; echo "rm log: $?"
                rmdir $M/.kvfs; echo "rmdir: $?"
                ls -a $M | tr '\n' ' '
                """#)
            #expect(result.output == """
                valid JSON
                [{"limit":1024,"used":2},{"limit":1048576,"used":12},"desk",1,true,true,true,"number","string",[]]
                pid is the daemon
                -r--r--r-- changes.log
                dr-xr-xr-x history
                -r--r--r-- status
                write status: 2
                rm log: 1
                rmdir: 1
                . .. .kvfs a b 
                """, "\(result)")
            #expect(result.error.contains("Permission denied"), "\(result)")
        }
    }

    @Test("creating the 1025th key fails with EDQUOT at create; existing keys still work")
    func keyQuota() throws {
        try withMount { sandbox in
            let result = try sandbox.run(#"""
                i=1; while [ $i -le 1024 ]; do : > $M/k$i; i=$((i+1)); done
                df -i $M | tail -1 | awk '{print $3, $4}'
                touch $M/extra; echo "touch: $?"
                echo x > $M/extra; echo "echo: $?"
                pywrite $M/extra2 x
                kvfs set extra3 y $S; echo "kvfs set: $?"
                ls $M | wc -l
                [ -e $M/extra ] || echo "no extra"
                echo new > $M/k1; bytes $M/k1
                mv $M/k2 $M/renamed; echo "mv: $?"; ls $M | wc -l
                grep -c '"reason":"QuotaViolationChange","code":2,"keys":\["extra' $M/.kvfs/changes.log
                rm $M/k3; touch $M/extra; echo "after rm, touch: $?"; ls $M | wc -l
                """#, timeout: 120)
            #expect(result.output == """
                1024 0
                touch: 1
                echo: 2
                open: EDQUOT
                kvfs set: 1
                1024
                no extra
                b'new\\n'
                mv: 0
                1024
                4
                after rm, touch: 0
                1024

                """, "\(result)")
            let errors = result.error.split(separator: "\n").map(String.init)
            #expect(errors.count == 3, "\(result)")
            #expect(errors.first == "touch: cannot touch '\(sandbox.mountPoint)/extra': Disk quota exceeded")
            #expect(errors.dropFirst().first?.hasSuffix("extra: Disk quota exceeded") == true)
            // kvfs set goes through the daemon, which says which limit and what to do (not only "Disk quota exceeded").
            #expect(errors.last == "Error: cannot create key 'extra3': the store already has 1024 keys; remove one first", "\(result)")
        }
    }

    @Test("one value over 1 MiB fails with EDQUOT from write and close; the old value stays")
    func valueQuota() throws {
        try withMount { sandbox in
            let result = try sandbox.run(#"""
                echo old > $M/k
                head -c 1048577 /dev/zero > $M/k; echo "head: $?"
                bytes $M/k
                head -c 1048577 /dev/zero > $M/new; echo "head new: $?"
                [ -e $M/new ] || echo "no new"
                python3 -c 'import os, sys, errno
                fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
                data, done = b"y" * 1100000, 0
                try:
                    while done < len(data): done += os.write(fd, data[done:])
                except OSError as e: print("write:", errno.errorcode[e.errno], "after at most 1 MiB" if done <= 1048576 else done)
                try: os.write(fd, b"z")
                except OSError as e: print("next write:", errno.errorcode[e.errno])
                try: os.close(fd)
                except OSError as e: print("close:", errno.errorcode[e.errno])' $M/k
                bytes $M/k
                head -c 1048576 /dev/urandom > $M/k; echo "exactly 1 MiB: $?"; size $M/k
                df -B1 --output=used,avail $M | tail -1 | awk '{print $1, $2}'
                grep -c QuotaViolationChange $M/.kvfs/changes.log
                """#)
            #expect(result.output == """
                head: 1
                b'old\\n'
                head new: 1
                no new
                write: EDQUOT after at most 1 MiB
                next write: EDQUOT
                close: EDQUOT
                b'old\\n'
                exactly 1 MiB: 0
                1048576
                1048576 0
                3

                """, "\(result)")
            // head reports the refusal of its write (and sometimes of its close too).
            #expect(result.error.split(separator: "\n").allSatisfy { $0.hasPrefix("head: ") && $0.hasSuffix(": Disk quota exceeded") }
                    && result.error.split(separator: "\n").count >= 2, "\(result)")
        }
    }

    @Test("values together over 1 MiB fail with EDQUOT; every old value stays")
    func totalQuota() throws {
        try withMount { sandbox in
            let result = try sandbox.run(#"""
                head -c 600000 /dev/urandom > $M/a
                echo old > $M/b
                head -c 500000 /dev/urandom > big
                head -c 500000 big > $M/b; echo "head: $?"
                cp big $M/c; echo "cp: $?"
                bytes $M/b; ls $M | tr '\n' ' '; echo
                head -c 448576 /dev/urandom > $M/b; echo "to the byte: $?"; size $M/b
                df -B1 --output=used,avail $M | tail -1 | awk '{print $1, $2}'
                echo > $M/d; echo "one more byte: $?"
                truncate -s 448577 $M/b; echo "truncate: $?"; size $M/b
                printf x >> $M/b; echo "append: $?"; size $M/b
                tail -4 $M/.kvfs/changes.log | jq -c .keys | tr '\n' ' '
                """#)
            #expect(result.output == """
                head: 1
                cp: 1
                b'old\\n'
                a b 
                to the byte: 0
                448576
                1048576 0
                one more byte: 1
                truncate: 1
                448576
                append: 1
                448576
                ["c"] ["d"] ["b"] ["b"] 
                """, "\(result)")
            // head (its write, sometimes its close too), cp (write and close), truncate; the shell's echo and printf say "I/O error".
            #expect(result.error.components(separatedBy: "Disk quota exceeded").count - 1 >= 4, "\(result)")
            #expect(result.error.components(separatedBy: "I/O error").count - 1 == 2, "\(result)")
        }
    }

    @Test("a key of 129 UTF-16 units fails with ENAMETOOLONG; 64 emoji (128 units) work, 65 do not")
    func keyLength() throws {
        try withMount { sandbox in
            let result = try sandbox.run(#"""
                k128=$(python3 -c 'print("k" * 128)'); k129=$(python3 -c 'print("k" * 129)')
                e64=$(python3 -c 'print("\U0001F600" * 64)'); e65=$(python3 -c 'print("\U0001F600" * 65)')
                echo x > $M/$k128; echo "128: $?"
                echo x > $M/$k129; echo "129: $?"
                touch $M/$k129; echo "touch 129: $?"
                echo x > $M/$e64; echo "64 emoji: $?"
                echo x > $M/$e65; echo "65 emoji: $?"
                mv $M/$k128 $M/$k129; echo "mv to 129: $?"
                kvfs set $k129 x $S; echo "kvfs set 129: $?"
                ls $M | python3 -c 'import sys; [print(len(line.rstrip("\n").encode("utf-16-le")) // 2) for line in sys.stdin]'
                kvfs ls $S | wc -l
                """#)
            #expect(result.output == """
                128: 0
                129: 2
                touch 129: 1
                64 emoji: 0
                65 emoji: 2
                mv to 129: 1
                kvfs set 129: 1
                128
                128
                2

                """, "\(result)")
            let errors = result.error.split(separator: "\n")
            #expect(errors.count == 5, "\(result)")
            #expect(errors.prefix(4).allSatisfy { $0.hasSuffix("File name too long") }, "\(result)")
            #expect(errors.last?.contains("129 UTF-16 units long; the limit is 128") == true, "\(result)")
        }
    }
}
