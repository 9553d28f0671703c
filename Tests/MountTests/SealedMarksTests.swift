import Foundation
import Testing

/// docs/sealed.md § Signing at sync points, through real mounts of a sealed
/// store (devices a and b, paired with `kvfs pair`/`kvfs join`): a mount's
/// writes are appended unsigned and reach the other device's mount with the
/// marks that sign them; a daemon killed between its writes and their mark
/// loses nothing acknowledged, and once it mounts again the other device
/// reads every one, with nothing refused.
@Suite("A sealed store's marks through mounts", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct SealedMarksTests {
    /// `flags FILE`: the flags byte of each whole sealed frame of FILE, one a line (docs/format.md § Sealed
    /// frames: 0 an unsigned record, 1 a signed one, 3 a mark).
    static let flags = #"""
        flags() { python3 -c 'import struct, sys
        data, offset = open(sys.argv[1], "rb").read(), 0
        while offset + 8 <= len(data):
            length, = struct.unpack_from("<I", data, offset)
            if length < 2 or offset + 8 + length > len(data): break
            print(data[offset + 9]); offset += 8 + length' "$1"; }
        segA() { ls $SYNC/devices/$(cat $T/s-a/device-id)/journal-*.log | tail -1; }

        """#

    @Test("a burst of writes through a's mount reaches b's mount: every record appended unsigned, signed by marks, none a write")
    func burstReachesTheOtherMount() throws {
        try withSandbox(.plain) { sandbox in  // sealed here, by device a
            try SealedAttackTests.pairedMounts(sandbox)
            try sandbox.ok("for i in $(seq 1 300); do echo v$i > $T/ma/burst$((i % 60)); done")
            let expected = (241...300).map { "v\($0)" }.sorted().joined(separator: "\n") + "\n"
            try waitUntil(seconds: 20, "the burst on b", every: 0.05) {
                try sandbox.ok("cat $T/mb/burst* 2>/dev/null | sort || true") == expected
            }
            let flags = try sandbox.ok(Self.flags + "flags $(segA) | sort | uniq -c | awk '{print $2 \":\" $1}'")
            let counts = Dictionary(uniqueKeysWithValues: flags.split(separator: "\n").map { line in
                let parts = line.split(separator: ":")
                return (Int(parts[0])!, Int(parts[1])!)
            })
            #expect(counts[1] == nil, "a record signed by itself: \(flags)")
            #expect((counts[0] ?? 0) >= 300, "the burst's records: \(flags)")
            #expect((counts[3] ?? 0) >= 1 && (counts[3] ?? 0) < counts[0] ?? 0, "marks: \(flags)")
            #expect(!(try sandbox.ok("kvfs status --sync-dir $SYNC --state-dir $T/s-b")).contains("refused"))
        }
    }

    @Test("kill -9 of a's daemon in the middle of a burst, then a mounts again: every acknowledged value is there, b reads them all, nothing is refused")
    func killedBeforeItsMark() throws {
        try withSandbox(.plain) { sandbox in  // sealed here, by device a
            try SealedAttackTests.pairedMounts(sandbox)
            let killed = try sandbox.ok(Self.flags + #"""
                pid=$(jq .pid $T/ma/.kvfs/status)
                : > $T/acked
                # dd, not the shell's `echo > k`: a value is acknowledged when close() says so.
                ( i=0
                  while :; do
                      i=$((i + 1))
                      echo v$i | dd of=$T/ma/c$((i % 20)) status=none || break
                      echo $i >> $T/acked
                  done ) 2>/dev/null &
                loop=$!
                for _ in $(seq 1000); do [ "$(wc -l < $T/acked)" -ge 40 ] && break; sleep 0.01; done
                kill -9 $pid
                wait $loop
                flags $(segA) | tail -1
                """#)
            // Most often the kill finds records no mark signs yet (its last frame is one: 0), which b cannot read yet.
            try sandbox.mount("ma", state: "s-a")
            // Each key holds the last value acknowledged for it, or the one written as the daemon died.
            let verify = #"""
                last=$(tail -1 $T/acked)
                for k in $(seq 0 19); do
                    i=$last; while [ $((i % 20)) -ne $k ]; do i=$((i - 1)); done
                    v=$(cat $T/MOUNT/c$k 2>/dev/null)
                    [ "$v" = "v$i" ] || [ "$v" = "v$((last + 1))" -a $(((last + 1) % 20)) -eq $k ] || echo "c$k: $v, acknowledged v$i"
                done
                """#
            #expect(try sandbox.ok(verify.replacingOccurrences(of: "MOUNT", with: "ma")) == "")
            try waitUntil(seconds: 20, "a's values on b", every: 0.05) {
                try sandbox.ok("for k in $(seq 0 19); do cat $T/ma/c$k; echo; done") == sandbox.ok("for k in $(seq 0 19); do cat $T/mb/c$k 2>/dev/null; echo; done")
            }
            #expect(try sandbox.ok(Self.flags + "flags $(segA) | tail -1") == "3\n", "a signed its records as it mounted again (its last frame at the kill: \(killed))")
            for state in ["s-a", "s-b"] {
                #expect(!(try sandbox.ok("kvfs status --sync-dir $SYNC --state-dir $T/\(state)")).contains("refused"), "\(state)")
                #expect(try sandbox.ok("grep -c refused $T/\(state)/daemon.log || true") == "0\n", "\(state)")
            }
        }
    }
}
