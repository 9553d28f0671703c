import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The daemon as a Linux tool runs (issue 10, issue 7 item 13): its name in
/// ps, its version, its logs, systemd's readiness protocol, an upgrade under
/// it, and unmount/SIGTERM ending it even when another mount namespace holds
/// a copy of the mount.
@Suite("The kvfs daemon", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct DaemonTests {
    @Test("kvfs unmount and SIGTERM end the daemon and free the state directory while another mount namespace holds a copy; the copy answers ENOTCONN",
          .enabled(if: geteuid() == 0, "unshare -m needs root"))
    func copyInAnotherNamespace() throws {
        try withSandbox { sandbox in
            for stop in ["kvfs unmount $M; echo \"unmount: $?\"", "kill -TERM $pid; echo \"unmount: 0\""] {
                let output = try sandbox.ok(#"""
                    kvfs mount $M $S && echo kept > $M/k
                    pid=$(jq .pid $M/.kvfs/status)
                    unshare -m --propagation unchanged sleep 60 & holder=$!
                    sleep 0.3
                    \#(stop)
                    for i in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
                    kill -0 $pid 2>/dev/null && echo "the daemon still runs"
                    nsenter -t $holder -m cat $M/k 2>&1 | sed "s|$M|M|"
                    kill $holder
                    kvfs get k $S
                    """#, timeout: 60)
                #expect(output == "unmount: 0\ncat: M/k: Transport endpoint is not connected\nkept\n", "\(stop)")
            }
        }
    }

    @Test("the daemon is named kvfs in ps and pgrep")
    func processName() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                pid=$(jq .pid $M/.kvfs/status)
                ps -o comm= -p $pid
                pgrep -x kvfs | grep -qx $pid && echo "pgrep finds it"
                """#)
            #expect(output == "kvfs\npgrep finds it\n")
        }
    }

    @Test("kvfs --version and .kvfs/status name the version and the commit")
    func version() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                kvfs --version
                jq -r .version $M/.kvfs/status
                kvfs status $S | grep '^daemon:' | sed 's/pid [0-9]*/pid N/'
                """#)
            let lines = output.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(output)")
            #expect(lines.first?.hasPrefix("kvfs 0.") == true && lines.first?.hasSuffix(")") == true, "\(output)")
            #expect(lines.first == "kvfs " + (lines.dropFirst().first ?? ""), "\(output)")
            #expect(lines.last == "daemon:     pid N, kvfs " + (lines.dropFirst().first ?? ""), "\(output)")
        }
    }

    @Test("when the binary is replaced under a running mount, kvfs status says the daemon runs an old binary and how to restart it",
          .plainOnly("a sealed sandbox's kvfs is a script that runs the built binary, so the copy the test replaces is not the daemon's executable"))
    func replacedBinary() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                mkdir bin && cp "$(command -v kvfs)" bin/kvfs
                bin/kvfs mount $M $S
                cp bin/kvfs bin/kvfs.new && mv bin/kvfs.new bin/kvfs    # what an upgrade does
                kvfs status $S | grep -A2 '^daemon:' | sed -e 's/pid [0-9]*/pid N/' -e "s|$T|T|g"
                """#)
            let lines = output.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("daemon:     pid N runs an old kvfs binary (") == true, "\(output)")
            #expect(lines.first?.contains("T/bin/kvfs was replaced since it started") == true, "\(output)")
            #expect(lines.dropFirst().first?.contains("kvfs unmount T/m && kvfs mount T/m") == true, "\(output)")
        }
    }

    @Test("under systemd (Type=notify) the daemon says READY=1 on $NOTIFY_SOCKET once mounted, and STOPPING=1 at SIGTERM, which unmounts cleanly")
    func systemdNotify() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                python3 -c 'import socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(30)
                for _ in range(2): print(s.recv(4096).decode().replace("\n", " "), flush=True)' $T/notify > notified &
                listener=$!
                while [ ! -S $T/notify ]; do sleep 0.05; done
                NOTIFY_SOCKET=$T/notify kvfs mount -f $M $S 2> foreground.log & daemon=$!
                while ! grep -q READY notified; do sleep 0.05; done
                grep -c " $M fuse.kvfs " /proc/mounts
                echo v > $M/k
                kill -TERM $daemon; wait $daemon; echo "daemon: $?"
                wait $listener
                sed "s|$M|M|" notified
                grep -c " $M fuse.kvfs " /proc/mounts
                kvfs get k $S
                """#)
            #expect(output == "1\ndaemon: 0\nREADY=1 STATUS=mounted at M\nSTOPPING=1\n0\nv\n")
        }
    }

    @Test("logs: a startup and a shutdown line with timestamp, level and subsystem, in daemon.log; on stderr with -f; journald's <N> prefix under systemd")
    func logs() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                kvfs mount $M $S -o allow_other && kvfs unmount $M
                sed -E -e 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z /TIME /' -e 's/ [0-9a-f-]{36} / ID /' -e 's/\([0-9a-f]{32}\)/(DEVICE)/' \
                    -e "s|$T|T|g" -e 's/kvfs [0-9.]+ \([^)]*\)/kvfs VERSION/' $STATE/daemon.log
                stat -c %a $STATE/daemon.log
                kvfs mount -f $M $S 2> foreground.log & daemon=$!
                while ! grep -q mounted foreground.log; do sleep 0.05; done
                kill -TERM $daemon; wait $daemon
                cut -d' ' -f2,3 foreground.log
                exec 3> journal.log
                JOURNAL_STREAM=$(stat -L -c '%d:%i' /proc/self/fd/3) kvfs mount -f $M $S 2>&3 & daemon=$!
                while ! grep -q mounted journal.log; do sleep 0.05; done
                kill -TERM $daemon; wait $daemon
                cut -c1-16 journal.log
                """#)
            #expect(output == """
                TIME info kvfs.daemon: kvfs VERSION mounted store ID of T/sync at T/m as device \(sandbox.firstDeviceName) (DEVICE), state in T/state, options: poll_interval=1.0,allow_other
                TIME info kvfs.daemon: unmounted T/m: every write committed; exiting
                600
                info kvfs.daemon:
                info kvfs.daemon:
                <6>kvfs.daemon: 
                <6>kvfs.daemon: 

                """)
        }
    }

    @Test("a newline or escape sequence in what a log line names (here the mount point) is spelled out: no forged line, nothing for a terminal")
    func logLinesCannotBeForged() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                m="$T/$(printf 'm\n2026-01-01T00:00:00.000Z error kvfs.daemon: forged \033[2J')"
                mkdir "$m" && kvfs mount "$m" $S && kvfs unmount "$m"
                wc -l < $STATE/daemon.log
                grep -c "$(printf '\033')" $STATE/daemon.log
                grep -o 'm\\u{a}2026[^ ]* error kvfs.daemon: forged \\u{1b}\[2J' $STATE/daemon.log | head -1
                """#)
            #expect(output == "2\n0\nm\\u{a}2026-01-01T00:00:00.000Z error kvfs.daemon: forged \\u{1b}[2J\n", "\(output)")
        }
    }

    @Test("kvfs mount -d stays attached and logs every FUSE request")
    func debug() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                kvfs mount -d $M $S 2> debug.log & daemon=$!
                while ! grep -q mounted debug.log; do sleep 0.05; done
                cat $M/.kvfs/status > /dev/null
                kill -TERM $daemon; wait $daemon
                grep -c 'debug kvfs.fuse: .*LOOKUP' debug.log | sed 's/^[1-9][0-9]*$/some/'
                """#)
            #expect(output == "some\n")
        }
    }

    @Test("the control socket in the state directory is the owner's only: another uid cannot connect, and were the mode lost, gets no answer")
    func controlSocket() throws {
        try withMount { sandbox in
            let mode = try sandbox.ok("stat -c '%F %a' $STATE/control.sock")
            #expect(mode == "socket 600\n")
            // One `kvfs get k` request, as the command line sends it; as root, then as nobody.
            let output = try sandbox.ok(#"""
                echo v > $M/k
                chmod 711 $T $STATE  # nobody may reach the socket: only its own protections are left
                ask() { "$@" python3 -c 'import errno, json, socket, struct, sys
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect(sys.argv[1])
                except OSError as e:
                    sys.exit(print("refused:", errno.errorcode[e.errno]))
                request = json.dumps({"get": {"key": "k"}}).encode()
                try:
                    s.sendall(struct.pack(">I", len(request)) + request)
                    reply = s.recv(1 << 16)
                except OSError:
                    reply = b""
                print("answered" if reply else "no answer")' $STATE/control.sock; }
                nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
                ask; ask $nobody
                chmod 666 $STATE/control.sock  # as if the mode were lost: the daemon checks the peer's uid itself
                ask $nobody; ask
                """#)
            #expect(output == "answered\nrefused: EACCES\nno answer\nanswered\n")
        }
    }
}

/// Issue 7 item 17 (and item 1's 77-line backtrace): a daemon that dies before
/// the mount is ready leaves one line on the caller's terminal; whatever it
/// printed (a crash's backtrace) is in daemon.log.
@Suite("A daemon that fails at start", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct DaemonStartFailureTests {
    @Test("a daemon that crashes (SIGSEGV) before the mount is ready: one line on the terminal, the backtrace in daemon.log")
    func crashBeforeReady() throws {
        let hello = MountEnvironment.productsDirectory.appendingPathComponent("fusekit-hello").path
        try #require(access(hello, X_OK) == 0, "fusekit-hello is not built at \(hello)")
        try withSandbox { sandbox in
            // The daemon is held at its first look at the mount point, inside a FUSE filesystem
            // whose server is stopped (fusekit-hello), while it is sent SIGSEGV.
            let result = try sandbox.run(#"""
                mkdir h; \#(hello) $T/h & hello=$!
                while [ ! -e h/hello ]; do sleep 0.05; done
                kill -STOP $hello
                kvfs mount $T/h/sub $S 2> err & mount=$!
                for i in $(seq 100); do daemon=$(pgrep -f "^kvfs mount $T/h/sub .*--foreground$") && break; sleep 0.05; done
                sleep 0.3
                kill -SEGV $daemon
                kill -CONT $hello
                wait $mount; echo "mount: $?"
                wc -l < err; grep -c '^Error: ' err
                for i in $(seq 100); do grep -q 'Program crashed' $STATE/daemon.log && break; sleep 0.05; done  # the backtracer takes a moment
                grep -q 'Program crashed' $STATE/daemon.log && echo "the backtrace is in daemon.log"
                fusermount3 -u h; wait $hello
                """#, timeout: 60)
            // The crash is process-directed, so the line is the crash's or (when another thread took the
            // signal) the error the main thread reached meanwhile: one line either way, never the backtrace.
            #expect(result.output == "mount: 1\n1\n1\nthe backtrace is in daemon.log\n", "\(result)")
        }
    }
}

/// FUSEKit's example filesystem (docs/architecture.md § FUSEKit) serves what it says.
@Suite("fusekit-hello", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct FUSEKitExampleTests {
    @Test("fusekit-hello mounts a read-only folder with one file, and fusermount3 -u ends it")
    func hello() throws {
        let hello = MountEnvironment.productsDirectory.appendingPathComponent("fusekit-hello").path
        try #require(access(hello, X_OK) == 0, "fusekit-hello is not built at \(hello)")
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                mkdir h; \#(hello) $T/h & pid=$!
                while [ ! -e h/hello ]; do sleep 0.05; done
                ls h; cat h/hello; stat -c '%A %s' h/hello
                echo x > h/hello 2>/dev/null || echo "read-only"
                fusermount3 -u h; wait $pid; echo "exited: $?"
                """#)
            #expect(output == "hello\nHello from FUSEKit!\n-r--r--r-- 20\nread-only\nexited: 0\n")
        }
    }
}
