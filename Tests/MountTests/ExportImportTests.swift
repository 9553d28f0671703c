import Foundation
import Testing

/// Issue 16 item 6: `kvfs export` writes a store as one XML property-list
/// dictionary; `kvfs import` writes one into a store, all or nothing, within
/// the quota, bit for bit, through the store's mount when one holds it.
@Suite("kvfs export and import", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct ExportImportTests {
    /// Store a's keys: every type, and values whose text loses bits (a date's
    /// fraction, a NaN's payload, -0.0, a date 150 ns after 2001 inside a dictionary).
    static let seed = #"""
        A="--store com.example.a"
        kvfs set d 2026-11-22T10:15:02.345Z --type date $A
        kvfs set r 'nan(0x5)' --type real $A
        kvfs set z -0.0 --type real $A
        kvfs set pi 3.141592653589793 --type real $A
        kvfs set i -5 --type integer $A
        kvfs set b yes --type bool $A
        printf '\000\001\377' | kvfs set blob - --type data $A
        kvfs set s "$(printf 'two\nlines & <tags>')" $A
        kvfs set nested '<plist><dict><key>when</key><date exact="1.5e-07">2001-01-01T00:00:00Z</date><key>list</key><array><real exact="-nan">nan</real></array></dict></plist>' --type dictionary $A

        """#

    @Test("export, then import into a new store, gives a store equal bit for bit: directly, and through a mount of the new store",
          arguments: Sealing.allCases)
    func roundTrip(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            let output = try sandbox.ok(Self.seed + #"""
                kvfs export $A > a.plist
                grep -c 'exact=' a.plist
                python3 -c 'import plistlib, sys; d = plistlib.load(open("a.plist", "rb")); print(sorted(d), d["d"], d["s"] == "two\nlines & <tags>")'
                kvfs import --store com.example.b a.plist && kvfs export --store com.example.b | cmp - a.plist && echo "b equals a"
                kvfs mount $M --store com.example.c && echo stale > $M/s && cat $M/s
                kvfs import --store com.example.c - < a.plist && cat $M/s && kvfs export --store com.example.c | cmp - a.plist && echo "c equals a"
                kvfs unmount $M
                kvfs export --store com.example.c | cmp - a.plist && echo "c equals a after unmount"
                python3 -c 'import plistlib, sys; sys.stdout.buffer.write(plistlib.dumps({"k": 1.5, "t": "x"}, fmt=plistlib.FMT_BINARY))' | kvfs import --store com.example.d
                kvfs ls --store com.example.d; kvfs get k --store com.example.d
                """#)
            #expect(output == """
                4
                ['b', 'blob', 'd', 'i', 'nested', 'pi', 'r', 's', 'z'] 2026-11-22 10:15:02 True
                b equals a
                stale
                two
                lines & <tags>
                c equals a
                c equals a after unmount
                k
                t
                1.5

                """)
        }
    }

    @Test("an import that would pass the quota changes nothing, directly and through a mount, and names the first key refused",
          arguments: Sealing.allCases)
    func overQuotaChangesNothing(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            let output = try sandbox.ok(#"""
                A="--store com.example.a"
                kvfs set theme dark $A && head -c 600000 /dev/zero | kvfs set big - --type data $A
                kvfs export $A > before.plist
                python3 -c 'import plistlib, sys; sys.stdout.buffer.write(plistlib.dumps({"a": bytes(300000), "b": bytes(300000), "theme": "light"}))' > over.plist
                kvfs import $A over.plist 2>&1; echo "status $?"
                kvfs export $A | cmp - before.plist && echo unchanged
                kvfs mount $M $A
                kvfs import $A < over.plist 2>&1; echo "status $?"
                cat $M/theme; ls $M
                kvfs unmount $M
                kvfs export $A | cmp - before.plist && echo unchanged
                echo '<plist><array/></plist>' | kvfs import $A 2>&1; echo "status $?"
                echo '<plist><dict><key></key><string>x</string></dict></plist>' | kvfs import $A 2>&1; echo "status $?"
                kvfs export $A | cmp - before.plist && echo unchanged
                """#)
            #expect(output == """
                Error: value for 'b' would put the store 151429 bytes over its 1048576-byte quota; remove or shrink other keys
                status 1
                unchanged
                Error: value for 'b' would put the store 151429 bytes over its 1048576-byte quota; remove or shrink other keys
                status 1
                dark
                big
                theme
                unchanged
                Error: cannot import: the property list holds one value of type array, not a dictionary of keys and values
                status 1
                Error: a key must not be empty
                status 1
                unchanged

                """)
        }
    }
}
