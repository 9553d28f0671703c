import Foundation
import Testing

/// Issue 24 item 2: nothing waits for another process while holding what
/// reads need. Another process of the device holding `journal.lock` (here
/// `flock(1)`; a Swift program stopped in a debugger in the middle of an
/// append does the same) holds up the mount's writes, for a bounded time,
/// and never its reads.
@Suite("Turns at the journal, through a mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct JournalTurnMountTests {
    @Test("another process holds journal.lock 10 s: reads every 10 ms go on (p99 under 50 ms, none waiting for it); a write waiting for it fails with EBUSY, a log line names the holder, and neither side loses a value")
    func readsNeverWaitForJournalLock() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                kvfs mount $M $S
                echo one > $M/k
                echo other > $M/r
                # flock(1) waits for the lock (the mount keeps it between its writes, until asked or waited for), then holds it 10 s.
                flock $STATE/journal.lock sh -c 'touch held; sleep 10' & F=$!
                while [ ! -e held ]; do sleep 0.01; done
                pywrite $M/k two > write.out &
                python3 - $M/r <<'PY'
                import sys, time
                times, end = [], time.monotonic() + 8
                while time.monotonic() < end:
                    start = time.monotonic()
                    with open(sys.argv[1]) as f: f.read()
                    times.append(time.monotonic() - start)
                    time.sleep(0.01)
                times.sort()
                # A loaded machine (the full suite on 2 cores) delays a read now and then by tens of
                # milliseconds; one waiting for the lock waits seconds (9.9 s at 0b953bb).
                p99, worst = times[int(0.99 * len(times))], times[-1]
                print("reads: " + ("p99 under 50 ms, none over 1 s" if p99 < 0.05 and worst < 1 else f"p99 {p99 * 1000:.0f} ms, worst {worst * 1000:.0f} ms"))
                PY
                wait
                cat write.out
                grep -c "a write of 'k' was refused: cannot append to this device's journal: pid $F (flock) has held $STATE/journal.lock for more than 5 s" $STATE/daemon.log
                cat $M/k
                echo three > $M/k; cat $M/k
                """#, timeout: 60)
            #expect(output == "reads: p99 under 50 ms, none over 1 s\nclose: EBUSY\n1\none\nthree\n")
        }
    }
}
