import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/files.md § Durability: SIGKILL loses nothing close() acknowledged, the next
/// `kvfs mount` cleans the stale mount point; SIGTERM unmounts cleanly.
@Suite("Crashes and signals", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct CrashTests {
    /// Checks, after a remount, that each of the 7 keys holds the last value
    /// the writer loop saw acknowledged for it — or the one write in flight
    /// when the daemon died. Prints `ok LAST` or what is wrong.
    static let verify = #"""
        python3 -c 'import sys, os
        mount, acked = sys.argv[1], [int(line) for line in open(sys.argv[2]) if line.strip()]
        last = acked[-1] if acked else 0
        problems = []
        for k in range(7):
            written = [v for v in acked if v % 7 == k]
            path = os.path.join(mount, "k%d" % k)
            if not written:
                continue
            value = int(open(path).read())
            allowed = {written[-1]} | ({last + 1} if (last + 1) % 7 == k else set())
            if value not in allowed:
                problems.append("k%d holds %d, expected one of %s" % (k, value, sorted(allowed)))
        print(" ".join(problems) if problems else "ok %d" % last)' "$M" acked
        """#

    @Test("kill -9 of the daemon at random points, 12 times: every acknowledged value is there after remount")
    func killNine() throws {
        try withSandbox { sandbox in
            try sandbox.mount()
            var generator = SystemRandomNumberGenerator()
            var acknowledged = 0
            for round in 1...12 {
                let delay = Double.random(in: 0.05...0.6, using: &generator)
                let result = try sandbox.run(#"""
                    pid=$(jq .pid $M/.kvfs/status)
                    : > acked
                    # dd, not the shell's `echo > k`: a value is acknowledged when close() says so, and the
                    # shell ignores close()'s errors (a flush the dying daemon never answered).
                    ( i=\#(acknowledged + 1000)
                      while :; do
                          i=$((i + 1))
                          echo $i | dd of=$M/k$((i % 7)) status=none || break
                          echo $i >> acked
                      done ) 2>/dev/null &
                    loop=$!
                    # The random delay counts from the first acknowledged write: a loaded machine may take longer to start the loop.
                    for _ in $(seq 1000); do [ -s acked ] && break; sleep 0.01; done
                    sleep \#(delay)
                    kill -9 $pid
                    wait $loop
                    [ -s acked ] || echo "nothing was written before the kill"
                    ls $M >/dev/null 2>&1 && echo "the mount point still answers after the kill"
                    kvfs mount $M $S || exit 1
                    grep -c " $M fuse.kvfs " /proc/mounts
                    \#(Self.verify)
                    """#)
                let lines = result.output.split(separator: "\n")
                #expect(result.status == 0 && lines.count == 2 && lines[0] == "1" && lines[1].hasPrefix("ok "),
                        "round \(round) (kill after \(delay) s): \(result)")
                if let last = lines.last?.split(separator: " ").last.flatMap({ Int($0) }) { acknowledged = last }
                if result.status != 0 { break }
            }
            #expect(acknowledged > 1000, "the writer loop never got going")
            // The store is consistent without the mount too: the journal holds the values the mount showed.
            let shown = try sandbox.ok("for k in 0 1 2 3 4 5 6; do cat $M/k$k; done")
            try sandbox.ok("kvfs unmount $M")
            #expect(try sandbox.ok("for k in 0 1 2 3 4 5 6; do kvfs get k$k $S; done") == shown)
        }
    }

    @Test("SIGTERM commits open files, unmounts cleanly and exits; the values are there after remount")
    func terminate() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                pid=$(jq .pid $M/.kvfs/status)
                for i in 1 2 3 4 5; do echo value$i > $M/k$i; done
                exec 3> $M/pending
                printf 'not yet closed' >&3
                kill -TERM $pid
                i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
                kill -0 $pid 2>/dev/null && echo "the daemon still runs"
                grep -c " $M " /proc/mounts
                exec 3>&-
                kvfs mount $M $S && echo remounted
                cat $M/k1 $M/k5 $M/pending
                ls $M | tr '\n' ' '
                """#)
            #expect(output == """
                0
                remounted
                value1
                value5
                not yet closed
                k1 k2 k3 k4 k5 pending 
                """)
        }
    }
}
