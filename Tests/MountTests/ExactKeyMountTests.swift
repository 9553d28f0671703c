import Foundation
import Testing

/// docs/files.md § Keys and file names: a key is its exact sequence of Unicode
/// scalars, so `café` with `é` as U+00E9 and with `e` + U+0301 are two keys,
/// on a mount, across mounts of one sync directory, and through `kvfs`.
@Suite("Keys that differ only in normalization are two keys", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct ExactKeyMountTests {
    /// `$A` and `$B`: the two spellings, as bytes (dash's printf has no `\x`).
    static let spellings = #"A=$(printf 'caf\303\251'); B=$(printf 'cafe\314\201')"# + "\n"

    /// Prints the names in a mount's root but its control folder as Python bytes, sorted: exactly what readdir gave.
    static let names = #"python3 -c 'import os, sys; print(sorted(set(os.listdir(os.fsencode(sys.argv[1]))) - {b".kvfs"}))'"#

    @Test("on one mount: ls shows two names, each cat its value, rm of one leaves the other, df counts 2 inodes")
    func oneMount() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(Self.spellings + """
                printf x > "$M/$A"; printf y > "$M/$B"
                \(Self.names) "$M"
                cat "$M/$A" "$M/$B"
                df --output=iused "$M" | tail -1 | tr -d ' '
                kvfs ls $S | od -An -c | tr -s ' '
                rm "$M/$A"
                \(Self.names) "$M"
                cat "$M/$A" 2>/dev/null || echo "no $A"
                cat "$M/$B"
                df --output=iused "$M" | tail -1 | tr -d ' '
                """)
            #expect(output == """
                [b'cafe\\xcc\\x81', b'caf\\xc3\\xa9']
                x
                y
                2
                 c a f e 314 201 \\n c a f 303 251 \\n
                [b'cafe\\xcc\\x81']
                no café
                y
                1

                """)
        }
    }

    @Test("two mounts of one sync directory (two devices), each writing one spelling: both mounts show both keys with their values")
    func twoMounts() throws {
        try withMount { sandbox in
            try sandbox.mount("m2", state: "state2")
            try sandbox.ok(Self.spellings + #"printf one > "$M/$A"; printf two > "$T/m2/$B""#)
            let want = "[b'cafe\\xcc\\x81', b'caf\\xc3\\xa9']\none two\n"
            for mount in ["$M", "$T/m2"] {
                let script = Self.spellings + "\(Self.names) \"\(mount)\"; echo \"$(cat \"\(mount)/$A\") $(cat \"\(mount)/$B\")\""
                var seen = ""
                let agreed = try poll(seconds: 10, every: 0.05) {
                    seen = try sandbox.run(script).output
                    return seen == want
                }
                #expect(agreed, "\(mount) shows \(seen)")
            }
        }
    }

    /// One session of commands with both spellings: set, get, ls, rm, export and import.
    static let session = spellings + """
        kvfs set "$A" one $S; kvfs set "$B" two $S
        kvfs get "$A" $S; kvfs get "$B" $S
        kvfs ls $S | od -An -c | tr -s ' '
        kvfs export $S > "$T/exported.plist"
        kvfs import "$T/exported.plist" --sync-dir "$T/copy" --state-dir "$T/copy-state"
        kvfs ls --sync-dir "$T/copy" --state-dir "$T/copy-state" | od -An -c | tr -s ' '
        kvfs export --sync-dir "$T/copy" --state-dir "$T/copy-state" | cmp - "$T/exported.plist" && echo "the copy exports the same bytes"
        kvfs rm "$A" $S
        kvfs get "$A" $S 2>/dev/null || echo "no $A"
        kvfs get "$B" $S

        """

    static let sessionOutput = """
        one
        two
         c a f e 314 201 \\n c a f 303 251 \\n
         c a f e 314 201 \\n c a f 303 251 \\n
        the copy exports the same bytes
        no café
        two

        """

    @Test("kvfs set, get, ls, rm, export and import keep the two spellings apart without a mount")
    func commandLineWithoutMount() throws {
        try withSandbox { sandbox in
            let result = try sandbox.run(Self.session)
            #expect(result.output == Self.sessionOutput && result.error.isEmpty, "\(result)")
        }
    }

    @Test("the same commands through a running mount's control socket, which shows what they did")
    func commandLineThroughMount() throws {
        try withMount { sandbox in
            let result = try sandbox.run(Self.session + Self.spellings + #"""
                \#(Self.names) "$M"; cat "$M/$B"
                """#)
            #expect(result.output == Self.sessionOutput + "[b'cafe\\xcc\\x81']\ntwo\n" && result.error.isEmpty, "\(result)")
        }
    }
}
