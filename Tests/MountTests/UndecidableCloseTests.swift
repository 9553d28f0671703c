import Foundation
import Testing

/// Issue 18 item 1: a refused `echo big > k` never empties a key, also where
/// the daemon cannot tell from /proc whether a close is the writer's last.
/// There the bare truncation waits for RELEASE, and the daemon says once why.
/// (Two more such cases cannot be made on this machine: a kernel without
/// fdinfo's `ino:` line, and an opener thread that exited between open and close.)
@Suite("Closes /proc cannot judge", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct UndecidableCloseTests {
    /// The writer of the issue: a value over 1 MiB into a key holding "old".
    static let refusedWrite = #"head -c 1048577 /dev/zero | tr '\0' x > $D/k 2>/dev/null; echo "big: $?"; bytes $D/k"#

    @Test("a mount point reached through a symbolic link: the mount is found, a refused write keeps the old value, : > k commits at close")
    func symlinkedMountPoint() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                mkdir $T/real; ln -s $T/real $T/lnk; D=$T/lnk
                kvfs mount $D $S
                echo old > $D/k
                \#(Self.refusedWrite)
                echo v > $D/t; : > $D/t; stat -c %s $D/t
                kvfs unmount $D && echo unmounted
                echo "cannot tell: $(grep -c 'cannot tell' $STATE/daemon.log)"
                """#)
            #expect(output == "big: 1\nb'old\\n'\n0\nunmounted\ncannot tell: 0\n")
        }
    }

    @Test("a daemon in a pid namespace of its own, the writer outside (pid 0): the old value stays, : > k commits at release, one log line")
    func writerOutsideThePidNamespace() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                D=$M
                unshare --pid --fork kvfs mount $D $S -f 2> $T/daemon.err &
                for i in $(seq 200); do grep -q " $D " /proc/self/mountinfo && break; sleep 0.05; done
                echo old > $D/k
                \#(Self.refusedWrite)
                \#(Self.refusedWrite)
                echo v > $D/t; : > $D/t
                for i in $(seq 200); do [ "$(stat -c %s $D/t)" = 0 ] && break; sleep 0.05; done; stat -c %s $D/t
                fusermount3 -u $D; wait
                grep -c 'outside the daemon.s pid namespace' $T/daemon.err
                """#)
            #expect(output == "big: 1\nb'old\\n'\nbig: 1\nb'old\\n'\n0\n1\n")
        }
    }

    @Test("a non-dumpable writer under a daemon that is not root (fdinfo unreadable): the old value stays")
    func nonDumpableWriter() throws {
        try withSandbox { sandbox in
            let result = try sandbox.run(asNobody(fuseMode: "666", #"""
                as_nobody $d/kvfs mount $d/m --sync-dir $d/sync --state-dir $d/state
                as_nobody sh -c "echo old > $d/m/k"
                # As the shell's > does: open with O_TRUNC, move to standard output, close the original, write.
                as_nobody python3 -c 'import ctypes, os, sys
                ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: its /proc/PID/fdinfo is root'"'"'s
                fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC); os.dup2(fd, 1); os.close(fd)
                try: os.write(1, b"x" * 1048577); os.close(1)
                except OSError as error: print("refused:", os.strerror(error.errno), file=sys.stderr)' $d/m/k
                as_nobody cat $d/m/k
                as_nobody $d/kvfs unmount $d/m
                grep -c 'fdinfo/1: Permission denied' $d/state/daemon.log
                """#))
            #expect(result.output == "refused: Disk quota exceeded\nold\n1\n", "\(result)")
        }
    }
}
