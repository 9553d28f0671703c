import Foundation
import Testing

/// docs/files.md § Values and their files: what `cat` shows for each type, how writes are read back,
/// refusals, and the extended attributes — through a real mount, with real tools.
@Suite("Values through a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct ValueTests {
    @Test("echo, printf and cat; an empty file is the empty string")
    func textValues() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                echo hello > $M/a
                printf 'no newline' > $M/b
                printf 'two\n\n' > $M/c
                : > $M/e
                printf 'caf\303\251 \342\230\225\n' > $M/u
                echo old > $M/t; : > $M/t
                python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC))' $M/u2 2>/dev/null
                echo old > $M/p; python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC))' $M/p
                bytes $M/a $M/b $M/c $M/e $M/u $M/t $M/p
                size $M/a $M/b $M/c $M/e $M/u
                xtype $M/a; xtype $M/e
                cat $M/a $M/b
                echo "[$(kvfs get e $S)] [$(kvfs get t $S)] [$(kvfs get p $S)]"
                """#)
            #expect(output == #"""
                b'hello\n'
                b'no newline\n'
                b'two\n\n'
                b''
                b'caf\xc3\xa9 \xe2\x98\x95\n'
                b''
                b''
                6
                11
                5
                0
                10
                string
                string
                hello
                no newline
                [] [] []

                """#)
        }
    }

    @Test("each type's file content, per the table of docs/files.md, from kvfs set --type and from XML property lists")
    func typedValues() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                kvfs set i --type integer $S -- -42
                kvfs set r 2.5 --type real $S
                kvfs set r3 3 --type real $S
                kvfs set n nan --type real $S
                kvfs set b yes --type bool $S
                kvfs set d 2026-03-04T05:06:07.250+02:00 --type date $S
                kvfs set d0 2026-03-04T05:06:07Z --type date $S
                kvfs set x abc --type data $S
                printf '<plist><integer>7</integer></plist>' > $M/pi
                printf '<plist><real>0.1</real></plist>' > $M/pr
                printf '<?xml version="1.0"?>\n<plist><false/></plist>' > $M/pb
                printf '  <plist><date>2026-01-01T00:00:00Z</date></plist>' > $M/pd
                printf '<plist><data>AAEC/w==</data></plist>' > $M/px
                printf '<plist><string>x</string></plist>' > $M/ps
                for k in i r r3 n b d d0 x pi pr pb pd px ps; do
                    printf '%s %s %s ' $k "$(xtype $M/$k)" "$(size $M/$k)"; bytes $M/$k
                done
                """#)
            #expect(output == #"""
                i integer 4 b'-42\n'
                r real 4 b'2.5\n'
                r3 real 4 b'3.0\n'
                n real 4 b'nan\n'
                b bool 5 b'true\n'
                d date 24 b'2026-03-04T03:06:07.25Z\n'
                d0 date 21 b'2026-03-04T05:06:07Z\n'
                x data 3 b'abc'
                pi integer 2 b'7\n'
                pr real 4 b'0.1\n'
                pb bool 6 b'false\n'
                pd date 21 b'2026-01-01T00:00:00Z\n'
                px data 4 b'\x00\x01\x02\xff'
                ps string 2 b'x\n'

                """#)
        }
    }

    @Test("a key keeps its type: text is parsed as it, data stays data byte for byte")
    func writesKeepTheType() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                kvfs set i 1 --type integer $S; kvfs set r 1 --type real $S; kvfs set b false --type bool $S
                kvfs set d 2020-01-01 --type date $S; kvfs set x abc --type data $S
                echo ' 43 ' > $M/i
                echo 2 > $M/r
                echo YES > $M/b
                echo 2026-05-06 > $M/d
                printf 'plain text\n' > $M/x
                for k in i r b d x; do printf '%s %s ' $k "$(xtype $M/$k)"; bytes $M/$k; done
                """#)
            #expect(output == #"""
                i integer b'43\n'
                r real b'2.0\n'
                b bool b'true\n'
                d date b'2026-05-06T00:00:00Z\n'
                x data b'plain text\n'

                """#)
        }
    }

    @Test("a write that does not parse as the key's type is refused with EINVAL at close; the old value stays")
    func badTypedWrites() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                kvfs set i 42 --type integer $S; kvfs set b true --type bool $S; kvfs set d 2020-01-01 --type date $S
                echo keep > $M/s
                pywrite $M/i 'abc'
                pywrite $M/i '12 34'
                pywrite $M/b 'maybe'
                pywrite $M/d 'yesterday'
                pywrite $M/s '<plist><dict><key>a</key>'
                pywrite $M/new '<?xml version="1.0"?><plist><array>'
                printf abc > bad.txt
                cp bad.txt $M/i 2>cp.err; echo "cp status $?"
                dd if=bad.txt of=$M/i status=none 2>dd.err; echo "dd status $?"
                printf abc > $M/i; echo "shell status $?"
                for k in i b d s; do printf '%s %s ' $k "$(xtype $M/$k)"; bytes $M/$k; done
                ls $M
                cat cp.err dd.err
                wc -c < $M/.kvfs/changes.log
                """#)
            #expect(output == #"""
                close: EINVAL
                close: EINVAL
                close: EINVAL
                close: EINVAL
                close: EINVAL
                close: EINVAL
                cp status 1
                dd status 1
                shell status 0
                i integer b'42\n'
                b bool b'true\n'
                d date b'2020-01-01T00:00:00Z\n'
                s string b'keep\n'
                b
                d
                i
                s
                cp: failed to close '\#(sandbox.mountPoint)/i': Invalid argument
                dd: closing output file '\#(sandbox.mountPoint)/i': Invalid argument
                0

                """#)
        }
    }

    @Test("user.kvfs.type, .modified and .device; no other extended attributes (other namespaces: EOPNOTSUPP)")
    func extendedAttributes() throws {
        try withSandbox { sandbox in
            try sandbox.mount(options: "--device-name laptop")
            let output = try sandbox.ok(#"""
                echo hello > $M/a
                getfattr -d -m - --absolute-names $M/a | sed 1d | sed 's/="[^"]*"//'
                getfattr --only-values -n user.kvfs.device $M/a | grep -Eq '^laptop \([0-9a-f]{32}\)$' && echo device ok
                getfattr --only-values -n user.kvfs.modified $M/a | grep -Eq '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z(\+[0-9]+)?$' && echo modified ok
                setfattr -n user.other -v x $M/a; echo "set other: $?"
                getfattr -n user.other $M/a; echo "get other: $?"
                setfattr -n user.kvfs.modified -v x $M/a; echo "set modified: $?"
                setfattr -x user.kvfs.type $M/a; echo "remove type: $?"
                setfattr -n user.kvfs.type -v nonsense $M/a; echo "set nonsense: $?"
                bytes $M/a
                getfattr -d -m - $M/.kvfs/status | wc -c
                """#)
            #expect(output == #"""
                user.kvfs.device
                user.kvfs.modified
                user.kvfs.type

                device ok
                modified ok
                set other: 1
                get other: 1
                set modified: 1
                remove type: 1
                set nonsense: 1
                b'hello\n'
                0

                """#)
            let errors = try sandbox.run(#"""
                setfattr -n user.other -v x $M/a; getfattr -n user.other $M/a; setfattr -n user.kvfs.modified -v x $M/a
                setfattr -x user.kvfs.type $M/a; setfattr -n user.kvfs.type -v nonsense $M/a
                getfattr -n security.selinux $M/a; getfattr -n system.posix_acl_access $M/a; setfattr -x trusted.x $M/a
                """#).error
            #expect(errors == """
                setfattr: \(sandbox.mountPoint)/a: Operation not supported
                \(sandbox.mountPoint)/a: user.other: No such attribute
                setfattr: \(sandbox.mountPoint)/a: Operation not permitted
                setfattr: \(sandbox.mountPoint)/a: Operation not permitted
                setfattr: \(sandbox.mountPoint)/a: Invalid argument
                \(sandbox.mountPoint)/a: security.selinux: Operation not supported
                \(sandbox.mountPoint)/a: system.posix_acl_access: Operation not supported
                setfattr: \(sandbox.mountPoint)/a: Operation not supported

                """)
        }
    }

    @Test("setfattr user.kvfs.type converts losslessly, refuses a lossy conversion with EINVAL and keeps the value")
    func typeConversion() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                echo 42 > $M/n
                kvfs set r 3 --type real $S; kvfs set f 2.5 --type real $S; kvfs set one 1 --type integer $S
                echo hello > $M/s
                show() { printf '%s %s ' $1 "$(xtype $M/$1)"; bytes $M/$1; }
                setfattr -n user.kvfs.type -v integer $M/n && show n
                setfattr -n user.kvfs.type -v string $M/n && show n
                setfattr -n user.kvfs.type -v integer $M/r && show r
                setfattr -n user.kvfs.type -v bool $M/one && show one
                setfattr -n user.kvfs.type -v data $M/s && show s
                setfattr -n user.kvfs.type -v string $M/s && show s
                setfattr -n user.kvfs.type -v integer $M/f 2>>err; echo "real 2.5 to integer: $?"; show f
                setfattr -n user.kvfs.type -v integer $M/s 2>>err; echo "string to integer: $?"; show s
                setfattr -n user.kvfs.type -v bool $M/f 2>>err; echo "real 2.5 to bool: $?"; show f
                setfattr -n user.kvfs.type -v array $M/s 2>>err; echo "string to array: $?"; show s
                cat err
                """#)
            #expect(output == #"""
                n integer b'42\n'
                n string b'42\n'
                r integer b'3\n'
                one bool b'true\n'
                s data b'hello'
                s string b'hello\n'
                real 2.5 to integer: 1
                f real b'2.5\n'
                string to integer: 1
                s string b'hello\n'
                real 2.5 to bool: 1
                f real b'2.5\n'
                string to array: 1
                s string b'hello\n'
                setfattr: \#(sandbox.mountPoint)/f: Invalid argument
                setfattr: \#(sandbox.mountPoint)/s: Invalid argument
                setfattr: \#(sandbox.mountPoint)/f: Invalid argument
                setfattr: \#(sandbox.mountPoint)/s: Invalid argument

                """#)
        }
    }

    @Test("binary content: cp and dd copy it byte for byte; a data key stays data")
    func binaryValues() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                head -c 100000 /dev/urandom > f
                cp f $M/bin && cmp f $M/bin && echo cp same
                dd if=f of=$M/dd bs=4096 status=none && cmp f $M/dd && echo dd same
                size $M/bin; xtype $M/bin
                cat $M/bin > back && cmp f back && echo cat same
                printf 'text now\n' > $M/bin; bytes $M/bin; xtype $M/bin
                echo string > $M/s; cp f $M/s && cmp f $M/s && xtype $M/s
                printf '\000\001\377' > $M/z; bytes $M/z; xtype $M/z
                """#)
            #expect(output == #"""
                cp same
                dd same
                100000
                data
                cat same
                b'text now\n'
                data
                data
                b'\x00\x01\xff'
                data

                """#)
        }
    }

    @Test("an XML or binary property list written with cat becomes its array or dictionary; cat prints the XML")
    func propertyLists() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                cat > doc.plist <<'EOF'
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <array>
                	<string>one</string>
                	<integer>2</integer>
                	<dict>
                		<key>nested</key>
                		<true/>
                	</dict>
                </array>
                </plist>
                EOF
                cat doc.plist > $M/arr
                xtype $M/arr
                cmp doc.plist $M/arr && echo same document
                [ "$(size $M/arr)" = "$(wc -c < doc.plist)" ] && echo size matches
                printf '<plist><dict><key>a</key><integer>1</integer></dict></plist>' > $M/dict
                xtype $M/dict
                cat $M/dict
                [ "$(size $M/dict)" = "$(cat $M/dict | wc -c)" ] && echo size matches
                python3 -c 'import plistlib, sys; sys.stdout.buffer.write(plistlib.dumps({"k": [1, "two"]}, fmt=plistlib.FMT_BINARY))' > $M/bp
                xtype $M/bp
                python3 -c 'import plistlib, sys; print(plistlib.load(open(sys.argv[1], "rb")))' $M/bp
                """#)
            #expect(output == #"""
                array
                same document
                size matches
                dictionary
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                	<key>a</key>
                	<integer>1</integer>
                </dict>
                </plist>
                size matches
                dictionary
                {'k': [1, 'two']}

                """#)
        }
    }
}
