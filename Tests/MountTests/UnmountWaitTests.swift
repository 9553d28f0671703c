import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18 item 9: `kvfs unmount` returns only once the daemon has
/// committed and exited — every thread of it ended, its state directory
/// free — also when another mount namespace holds a copy of the mount
/// (which keeps the FUSE connection alive after `fusermount3 -u`, so the
/// daemon ends only when sent SIGTERM).
@Suite("kvfs unmount waits for the daemon", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct UnmountWaitTests {
    @Test("with a copy of the mount in another mount namespace, kvfs unmount returns after every thread of the daemon has ended and its state directory is free",
          .enabled(if: geteuid() == 0, "unshare -m needs root"))
    func copyInAnotherNamespace() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                threads() {  # the daemon's live threads (a zombie leader is not one), read with builtins only, so the look is immediate
                    n=0 state=gone
                    while read -r name value rest; do
                        case $name in State:) state=$value;; Threads:) n=$value;; esac
                    done < /proc/$pid/status 2>/dev/null
                    [ "$state" = Z ] && n=$((n - 1))
                    echo $n
                }
                for round in 1 2 3 4 5; do
                    kvfs mount $M $S && echo "v$round" > $M/k
                    pid=$(jq .pid $M/.kvfs/status)
                    unshare -m --propagation unchanged sleep 60 & holder=$!
                    sleep 0.3
                    kvfs unmount $M; status=$?; left=$(threads)
                    flock -n $STATE/lock true && lock=free || lock=held
                    echo "unmount: $status, threads left: ${left:-0}, state directory: $lock"
                    kill $holder; wait $holder 2>/dev/null
                    kvfs get k $S
                done
                """#, timeout: 120)
            let round = { (n: Int) in "unmount: 0, threads left: 0, state directory: free\nv\(n)\n" }
            #expect(output == (1...5).map(round).joined())
        }
    }
}
