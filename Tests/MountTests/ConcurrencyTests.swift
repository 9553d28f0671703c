import Foundation
import Testing

/// docs/files.md § File semantics: writers and readers in parallel; every value is one
/// writer's whole value, never a mix, and the store agrees with the mount.
@Suite("Parallel writers on a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct ConcurrencyTests {
    @Test("4 shell loops write their own keys and one shared key while 2 loops read: no mixed values")
    func parallelWriters() throws {
        try withMount { sandbox in
            // Each value is `yes TOKEN | head -n 4000`: 12 to 16 kB, written in several write() calls,
            // one token repeated, so a mix of two values (or a part of one) is easy to see.
            let result = try sandbox.run(#"""
                yes start | head -n 4000 > $M/shared
                for w in A B C D; do
                    ( for i in $(seq 1 60); do
                          yes $w$i | head -n 4000 > $M/shared
                          yes $w$i | head -n 4000 > $M/own$w
                      done ) &
                done
                for r in 1 2; do
                    ( for i in $(seq 1 60); do cat $M/shared > read$r-$i; done ) &
                done
                wait
                python3 -c 'import glob, sys
                def whole(content):
                    token = content.split(b"\n", 1)[0]
                    return len(token) > 0 and content == (token + b"\n") * 4000
                bad = [p for p in sorted(glob.glob("read*")) if not whole(open(p, "rb").read())]
                print("reads:", len(glob.glob("read*")), "mixed:", bad[:3])
                for key in ["shared", "ownA", "ownB", "ownC", "ownD"]:
                    content = open(sys.argv[1] + "/" + key, "rb").read()
                    print(key, whole(content), content.split(b"\n", 1)[0].decode())' $M
                for k in shared ownA ownB ownC ownD; do [ "$(size $M/$k)" = "$(wc -c < $M/$k)" ] || echo "stale size of $k"; done
                ls $M | tr '\n' ' '; echo
                kvfs ls $S | tr '\n' ' '; echo
                cat $M/shared | md5sum > shown
                kvfs unmount $M
                kvfs ls $S | tr '\n' ' '; echo
                kvfs get shared $S | md5sum | cmp - shown && echo "the journal holds what the mount showed"
                """#, timeout: 150)
            let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(result.status == 0, "\(result)")
            #expect(lines.first == "reads: 120 mixed: []", "\(result)")
            #expect(lines.dropFirst().prefix(5).allSatisfy { $0.split(separator: " ").dropFirst().first == "True" }, "\(result)")
            #expect(Array(lines.dropFirst(2).prefix(4)) == ["ownA True A60", "ownB True B60", "ownC True C60", "ownD True D60"],
                    "each writer's own key holds its last value: \(result)")
            #expect(["A60", "B60", "C60", "D60"].contains(lines.dropFirst().first?.split(separator: " ").last.map(String.init) ?? ""),
                    "the shared key holds one writer's last value: \(result)")
            #expect(Array(lines.dropFirst(6)) == [
                "ownA ownB ownC ownD shared ", "ownA ownB ownC ownD shared ", "ownA ownB ownC ownD shared ",
                "the journal holds what the mount showed", "",
            ], "\(result)")
        }
    }
}
