import Foundation
import Testing

/// docs/machines.md § Conflicts are told and § Where a value has got to, and
/// docs/command-line.md § `kvfs wait`: two mounts as two devices.
@Suite("Conflicts and delivery between mounts", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct DeliveryMountTests {
    /// The conflict lines of a change log, each as `key lost-device winner-device restore-command`.
    static let conflicts = #"jq -r 'select(.reason == "Conflict") | "\(.keys[0]) \(.lost.device) \(.winner.device) \(.restore)"'"#

    @Test("kvfs wait returns once the other mount has read the write, and times out (75, naming it) while its daemon is stopped; user.kvfs.delivered follows")
    func waitAndDelivered() throws {
        try withSandbox { sandbox in
            try sandbox.mount("m", state: "state", options: "--device-name one")
            try sandbox.mount("m2", state: "state2", options: "--device-name two")
            let other = try sandbox.ok("jq .pid $T/m2/.kvfs/status").trimmingCharacters(in: .whitespacesAndNewlines)
            let stopped = try sandbox.run("""
                kill -STOP \(other)
                kvfs set k v1 $S
                getfattr --absolute-names --only-values -n user.kvfs.delivered $M/k; echo --
                kvfs wait k --timeout 1 $S; status=$?
                kill -CONT \(other); exit $status
                """)
            #expect(stopped.status == 75, "\(stopped)")
            #expect(stopped.output == "one\n--\n", "\(stopped)")
            #expect(stopped.error == "Error: not read within 1 s by two\n", "\(stopped)")
            let delivered = try sandbox.ok("""
                kvfs wait k --timeout 10 $S && kvfs wait --timeout 10 $S && echo waited
                getfattr --absolute-names --only-values -n user.kvfs.delivered $M/k; echo --
                getfattr --absolute-names --only-values -n user.kvfs.delivered $T/m2/k; echo --
                getfattr -d --absolute-names $M/k | grep -c user.kvfs
                """)
            #expect(delivered == "waited\none\ntwo\n--\ntwo\none\n--\n3\n", "listxattr names the three it always did")
            let history = try sandbox.ok("kvfs history k $S | grep -c ' v1 .*current, read by one, two'; kvfs history k --json $S | jq -c '[.[].deliveredTo]'")
            #expect(history == "1\n[[\"one\",\"two\"]]\n", "kvfs history shows who has read the current version")
            // A write read at once: kvfs wait returns within a fraction of a second.
            let timed = try sandbox.ok(#"start=$(date +%s%N); kvfs set k v2 $S && kvfs wait k --timeout 10 $S; echo $(( ($(date +%s%N) - start) / 1000000 ))"#)
            #expect((Int(timed.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max) < 5000, "kvfs set && kvfs wait took \(timed) ms")
            // A device that closed its store is not waited for.
            try sandbox.ok("kvfs unmount $T/m2; kvfs set k v3 $S; kvfs wait k --timeout 0 $S")
        }
    }

    @Test("without a mount, kvfs wait reads the store itself; a bad timeout is a usage error")
    func waitWithoutMount() throws {
        try withSandbox { sandbox in
            try sandbox.ok("kvfs set k v $S; kvfs set other w --sync-dir $SYNC --state-dir $T/state2; kvfs wait k --timeout 0 $S")
            let bad = try sandbox.run("kvfs wait --timeout=-1 $S")
            #expect(bad.status == 64 && bad.error.hasPrefix("Error: --timeout"), "\(bad)")
        }
    }

    @Test("concurrent writes on two mounts whose folders are joined afterwards: the mount whose value lost logs one conflict line with the restore command")
    func conflictLine() throws {
        try withSandbox { sandbox in
            try sandbox.mount("m", sync: "sync-a", state: "state", options: "--device-name one")
            try sandbox.ok("mkdir -p $T/sync-b && cp $T/sync-a/store-id $T/sync-b/")
            try sandbox.mount("m2", sync: "sync-b", state: "state2", options: "--device-name two")
            try sandbox.ok("echo light > $M/theme; sleep 0.01; echo dark > $T/m2/theme")  // two's is later: it wins
            let lostTime = try sandbox.ok("date -u -d @$(stat -c %.3Y $M/theme) +%Y-%m-%dT%H:%M:%S.%3NZ")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            try sandbox.ok("""
                for d in $T/sync-a/devices/*; do cp -r $d $T/sync-b/devices/; done
                for d in $T/sync-b/devices/*; do [ -e $T/sync-a/devices/$(basename $d) ] || cp -r $d $T/sync-a/devices/; done
                """)
            let shown = try SharingTests.poll(sandbox, "cat $M/theme", until: "dark\n")
            #expect(shown == "dark\n")
            var lines = ""
            try TestSupport.poll(seconds: 5) {
                lines = try sandbox.ok("\(Self.conflicts) $M/.kvfs/changes.log")
                return !lines.isEmpty
            }
            #expect(lines == "theme one two kvfs restore theme \(lostTime)@one --sync-dir \(sandbox.path)/sync-a --state-dir \(sandbox.path)/state\n")
            let serverChange = try sandbox.ok(#"jq -c 'select(.reason == "ServerChange") | .keys' $M/.kvfs/changes.log"#)
            #expect(serverChange.contains("[\"theme\"]"), "\(serverChange)")
            #expect(try sandbox.ok("\(Self.conflicts) $T/m2/.kvfs/changes.log").isEmpty, "the winner lost nothing")
            // History marks the lost version, and the line's command brings its value back.
            let options = "--sync-dir $T/sync-a --state-dir $T/state"
            let marks = try sandbox.ok("kvfs history theme --json \(options) | jq -r '.[] | \"\\(.device) \\(.lost) \\(.current)\"'")
            #expect(marks == "one true false\ntwo false true\n")
            let restore = try #require(lines.split(separator: " ", maxSplits: 3).last.map(String.init))
            try sandbox.ok(restore)
            #expect(try sandbox.ok("cat $M/theme") == "light\n")
        }
    }

    @Test("a sequential overwrite on two mounts of one folder is no conflict")
    func sequentialIsNoConflict() throws {
        try withSandbox { sandbox in
            try sandbox.mount("m", state: "state", options: "--device-name one")
            try sandbox.mount("m2", state: "state2", options: "--device-name two")
            try sandbox.ok("echo light > $M/theme")
            #expect(try SharingTests.poll(sandbox, "cat $T/m2/theme", until: "light\n") == "light\n")
            try sandbox.ok("echo dark > $T/m2/theme")
            #expect(try SharingTests.poll(sandbox, "cat $M/theme", until: "dark\n") == "dark\n")
            // A later write's ServerChange line: the read that brought `dark` has logged all it would.
            try sandbox.ok("echo x > $T/m2/after")
            let after = #"jq -c 'select(.reason == "ServerChange") | .keys' $M/.kvfs/changes.log | grep -c after"#
            #expect(try SharingTests.poll(sandbox, after, until: "1\n") == "1\n")
            let logs = try sandbox.ok(#"jq -r '.reason' $M/.kvfs/changes.log | sort -u"#)
            #expect(logs == "ServerChange\n", "\(logs)")
        }
    }
}
