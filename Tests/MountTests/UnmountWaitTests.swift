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
            let output = try sandbox.ok(Self.threads + "\n" + #"""
                for round in 1 2 3 4 5; do
                    kvfs mount $M $S && echo "v$round" > $M/k
                    pid=$(jq .pid $M/.kvfs/status)
                    unshare -m --propagation unchanged sleep 60 & holder=$!
                    sleep 0.3
                    kvfs unmount $M; status=$?; left=$(threads $pid)
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

    /// `threads PID`: the process's live threads (a zombie leader is not one), read with builtins only, so the look is immediate.
    static let threads = #"""
        threads() {
            n=0 state=gone
            while read -r name value rest; do
                case $name in State:) state=$value;; Threads:) n=$value;; esac
            done < /proc/$1/status 2>/dev/null
            [ "$state" = Z ] && n=$((n - 1))
            echo $n
        }
        """#

    @Test("issue 24 item 8: a daemon in a pid namespace of its own (unshare --pid --fork kvfs mount -f), whose status says pid 1, is waited for, and sent SIGTERM when a copy of the mount keeps it",
          .enabled(if: geteuid() == 0, "unshare --pid needs root"))
    func daemonInPidNamespace() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(Self.threads + "\n" + #"""
                unshare --pid --fork kvfs mount -f $M $S 2>daemon.err & holder=$!
                for n in $(seq 1 200); do [ -e $M/.kvfs/status ] && break; sleep 0.05; done
                echo kept > $M/k
                pid=$(pgrep -P $holder)
                echo "status says pid $(jq .pid $M/.kvfs/status)"
                unshare -m --propagation unchanged sleep 60 & copy=$!
                sleep 0.3
                kvfs unmount $M; status=$?; left=$(threads $pid)
                flock -n $STATE/lock true && lock=free || lock=held
                echo "unmount: $status, threads left: ${left:-0}, state directory: $lock"
                kill $copy; wait $copy 2>/dev/null
                kill -KILL $pid 2>/dev/null; wait $holder 2>/dev/null
                kvfs get k $S
                """#, timeout: 60)
            #expect(output == "status says pid 1\nunmount: 0, threads left: 0, state directory: free\nkept\n")
        }
    }

    @Test("issue 24 item 8: kvfs unmount of a daemon in a pid namespace of its own never signals another store's daemon that has its number here",
          .enabled(if: geteuid() == 0, "unshare --pid and ns_last_pid need root"))
    func samePidNumberElsewhere() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                mkdir other
                kvfs mount other --sync-dir $T/osync --state-dir $T/ostate && echo other > other/k
                other=$(jq .pid other/.kvfs/status)
                # The namespace's next pid is the other daemon's number here (ns_last_pid is the writer's namespace's;
                # `;`, not `&&`, which would put the write in the background's forked subshell too).
                unshare --pid --fork sh -c "echo $((other - 1)) > /proc/sys/kernel/ns_last_pid; kvfs mount -f $M $S 2>daemon.err & wait" & holder=$!
                for n in $(seq 1 200); do [ -e $M/.kvfs/status ] && break; sleep 0.05; done
                [ "$(jq .pid $M/.kvfs/status)" = "$other" ] && echo "the same pid number"
                echo mine > $M/k
                kvfs unmount $M; echo "unmount: $?"
                wait $holder; echo "namespace ended: $?"
                cat other/k
                kvfs unmount other; echo "other unmount: $?"
                kvfs get k $S
                """#, timeout: 60)
            #expect(output == "the same pid number\nunmount: 0\nnamespace ended: 0\nother\nother unmount: 0\nmine\n")
        }
    }
}
