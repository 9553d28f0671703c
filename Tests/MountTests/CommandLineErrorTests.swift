import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/command-line.md § Errors and exit status, and issue 7 item 17: each failure is one accurate
/// line, bad option values are refused, and the exit status tells a usage
/// error (64), a busy state directory (75) and an I/O failure (74) apart.
@Suite("kvfs's errors and exit statuses", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct CommandLineErrorTests {
    /// Runs `script`, which must fail with `status` and print exactly `line` (after `Error: `) on standard error.
    func expectOneLine(_ sandbox: Sandbox, _ script: String, _ line: String, status: Int32,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try sandbox.run(script)
        #expect(result.status == status, "\(script): \(result)", sourceLocation: sourceLocation)
        #expect(result.error == "Error: \(line)\n", "\(script): \(result)", sourceLocation: sourceLocation)
        #expect(!sandbox.isMounted(sandbox.mountPoint), "\(script) mounted", sourceLocation: sourceLocation)
    }

    @Test("bad option values are refused with one line and status 64: unknown -o option, device names, poll intervals")
    func badValues() throws {
        try withSandbox { sandbox in
            let cannot = "cannot mount \(sandbox.mountPoint): "
            for (script, line) in [
                ("kvfs mount $M $S -o allow_other,bogus", cannot + "unknown option(s): `-o bogus'"),
                ("kvfs mount $M $S --device-name ''", "the device name is empty"),
                ("kvfs mount $M $S -o device_name=", "the mount option device_name needs a value (device_name=...)"),
                (#"kvfs mount $M $S --device-name "$(printf 'two\nlines')""#, "the device name contains a control character (a newline, a tab, ...)"),
                (#"kvfs mount $M $S --device-name "$(head -c 5000 /dev/zero | tr '\0' x)""#, "the device name is 5000 characters long; at most 64 are allowed"),
                ("kvfs mount $M $S -o poll_interval=abc", "poll_interval=abc is not a number of seconds"),
                ("kvfs mount $M $S --poll-interval=-5", "--poll-interval must be more than 0 and at most 3600 seconds, not -5.0"),
                // A negative number after a space is the option's value too, not an unknown option.
                ("kvfs mount $M $S --poll-interval -5", "--poll-interval must be more than 0 and at most 3600 seconds, not -5.0"),
                ("kvfs status $S --stale-after -5", "--stale-after must be a positive number of seconds"),
                ("kvfs mount $M $S -o poll_interval=0", "poll_interval must be more than 0 and at most 3600 seconds, not 0.0"),
                ("kvfs set k v --type colour $S", "unknown type 'colour'; use one of: string, integer, real, bool, date, data, array, dictionary"),
            ] {
                try expectOneLine(sandbox, script, line, status: 64)
            }
        }
    }

    @Test("a mount point that holds files is refused (the mount would hide them) unless -o nonempty")
    func nonEmptyMountPoint() throws {
        try withSandbox { sandbox in
            try expectOneLine(sandbox, "touch $M/mine; kvfs mount $M $S",
                              "cannot mount \(sandbox.mountPoint): \(sandbox.mountPoint) is not empty, and the mount would hide its files; use an empty folder, or -o nonempty to mount over them",
                              status: 1)
            #expect(try sandbox.ok("kvfs mount $M $S -o nonempty && echo v > $M/k && ls $M && kvfs unmount $M && ls $M") == "k\nmine\n")
        }
    }

    @Test("a busy state directory is status 75, an unreadable store 74")
    func busyAndIO() throws {
        try withMount { sandbox in
            let second = try sandbox.run("mkdir $T/m2; kvfs mount $T/m2 $S; status=$?; rmdir $T/m2; exit $status")
            #expect(second.status == 75 && second.error.hasPrefix("Error: cannot mount \(sandbox.path)/m2: state directory \(sandbox.stateDirectory) is in use by ")
                    && second.error.split(separator: "\n").count == 1, "\(second)")
            // Without its control socket the mount cannot be asked: the state directory is busy.
            let busy = try sandbox.run("mv $STATE/control.sock $T/away; kvfs get k $S; status=$?; mv $T/away $STATE/control.sock; exit $status")
            #expect(busy.status == 75 && busy.error.hasPrefix("Error: state directory ") && busy.error.split(separator: "\n").count == 1, "\(busy)")
            let unreadable = try sandbox.run("touch $T/file; kvfs get k --sync-dir $T/file --state-dir $T/state2")
            #expect(unreadable.status == 74 && unreadable.error.hasPrefix("Error: \(sandbox.path)/file") && unreadable.error.split(separator: "\n").count == 1,
                    "\(unreadable)")
        }
    }

    @Test("a daemon that is stopped (SIGSTOP) does not hang kvfs get: one line after the answer timeout, status 74")
    func stoppedDaemon() throws {
        try withMount { sandbox in
            let result = try sandbox.run("""
                pid=$(jq .pid $M/.kvfs/status); echo v > $M/k
                kill -STOP $pid; kvfs get k $S; status=$?; kill -CONT $pid; exit $status
                """, timeout: 90)
            #expect(result.status == 74 && result.error.hasPrefix("Error: the kvfs daemon at \(sandbox.stateDirectory)/control.sock did not answer within 30 s")
                    && result.error.split(separator: "\n").count == 1, "\(result)")
            #expect(try sandbox.ok("kvfs get k $S") == "v\n", "the daemon serves again once continued")
        }
    }

    @Test("no permission on /dev/fuse: one line that says so (not that it may be missing)",
          .enabled(if: geteuid() == 0, "needs root to make /dev/fuse unreadable in a private mount namespace"))
    func fuseDevicePermission() throws {
        try withSandbox { sandbox in
            // nobody, in a mount namespace where /dev/fuse is a 0600 node of root's: as where /dev/fuse is not the user's.
            let result = try sandbox.run(asNobody(fuseMode: "600", "as_nobody $d/kvfs mount $d/m"))
            #expect(result.output == "Error: cannot mount D/m: no permission to open /dev/fuse (Permission denied): it must be readable and writable for you, as its usual mode 0666 makes it\n",
                    "\(result)")
        }
    }
}
