import Foundation
import Testing

/// docs/machines.md § Conflicts are told and § Where a value has got to, and
/// docs/command-line.md § `kvfs wait`: two mounts as two devices.
@Suite("Conflicts and delivery between mounts", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct DeliveryMountTests {
    /// The conflict lines of a change log, each as `key lost-device winner-device restore-command`.
    static let conflicts = #"jq -r 'select(.reason == "Conflict") | "\(.keys[0]) \(.lost.device) \(.winner.device) \(.restore)"'"#

    /// Mounts `m` as device `one` and `m2` as device `two`, on one folder.
    static func mountOneAndTwo(_ sandbox: Sandbox) throws {
        try sandbox.mount("m", state: "state", options: "--device-name one")
        try sandbox.mount("m2", state: "state2", options: "--device-name two")
    }

    /// A field of the status of the mount at `mount` (a `jq` path: `.pid`, `.device.id`).
    static func status(_ sandbox: Sandbox, _ mount: String, _ field: String) throws -> String {
        try sandbox.ok("jq -r \(field) \(mount)/.kvfs/status").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("kvfs wait returns once the other mount has read the write, and times out (75, naming it) while its daemon is stopped; user.kvfs.delivered follows",
          arguments: Sealing.allCases)
    func waitAndDelivered(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            try Self.mountOneAndTwo(sandbox)
            let other = try Self.status(sandbox, "$T/m2", ".pid")
            let stopped = try sandbox.run("""
                kill -STOP \(other)
                kvfs set k v1 $S
                getfattr --absolute-names --only-values -n user.kvfs.delivered $M/k; echo; echo --
                kvfs wait k --timeout 1 $S; status=$?
                kill -CONT \(other); exit $status
                """)
            #expect(stopped.status == 75, "\(stopped)")
            #expect(stopped.output == "one\n--\n", "\(stopped)")
            #expect(stopped.error == "Error: not read within 1 s by two\n", "\(stopped)")
            let delivered = try sandbox.ok("""
                kvfs wait k --timeout 10 $S && kvfs wait --timeout 10 $S && echo waited
                getfattr --absolute-names --only-values -n user.kvfs.delivered $M/k; echo; echo --
                getfattr --absolute-names --only-values -n user.kvfs.delivered $T/m2/k; echo; echo --
                getfattr -d --absolute-names $M/k | grep -c user.kvfs
                """)
            #expect(delivered == "waited\none, two\n--\ntwo, one\n--\n3\n", "listxattr names the three it always did")
            let history = try sandbox.ok("kvfs history k $S | grep -c ' v1 .*current, read by one, two'; kvfs history k --json $S | jq -c '[.[].deliveredTo]'")
            #expect(history == "1\n[[\"one\",\"two\"]]\n", "kvfs history shows who has read the current version")
            // A write read at once: kvfs wait returns within a fraction of a second.
            let timed = try sandbox.ok(#"start=$(date +%s%N); kvfs set k v2 $S && kvfs wait k --timeout 10 $S; echo $(( ($(date +%s%N) - start) / 1000000 ))"#)
            #expect((Int(timed.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max) < 5000, "kvfs set && kvfs wait took \(timed) ms")
            // A device that closed its store is not waited for.
            try sandbox.ok("kvfs unmount $T/m2; kvfs set k v3 $S; kvfs wait k --timeout 0 $S")
        }
    }

    @Test("without a mount, kvfs wait reads the store itself; a bad timeout is a usage error",
          arguments: Sealing.allCases)
    func waitWithoutMount(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            try sandbox.ok("kvfs set k v $S; kvfs set other w --sync-dir $SYNC --state-dir $T/state2; kvfs wait k --timeout 0 $S")
            let bad = try sandbox.run("kvfs wait --timeout=-1 $S")
            #expect(bad.status == 64 && bad.error.hasPrefix("Error: --timeout"), "\(bad)")
        }
    }

    @Test("without a mount, kvfs wait reads the journal once and then only what is new: waiting 2 s it reads about the journal once (every 10 ms at 0b953bb)")
    func waitWithoutMountReadsIncrementally() throws {
        try withSandbox { sandbox in
            // About 1.2 MB of this device's journal: history keeps every version.
            try sandbox.ok("v=$(head -c 40000 /dev/zero | tr '\\0' x); for i in $(seq 30); do kvfs set big \"$v$i\" $S || exit 1; done")
            let journal = try #require(Int(try sandbox.ok("cat $SYNC/devices/*/journal-* $SYNC/devices/*/snapshot-* 2>/dev/null | wc -c")
                .trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(journal > 1_000_000)
            try sandbox.mount("m2", state: "state2", options: "--device-name two")
            let other = try Self.status(sandbox, "$T/m2", ".pid")
            let read = try sandbox.run("""
                kill -STOP \(other)
                kvfs set k v $S
                kvfs wait k --timeout 3 $S & waiter=$!
                sleep 2; sed -n 's/^rchar: //p' /proc/$waiter/io
                wait $waiter; status=$?
                kill -CONT \(other); exit $status
                """)
            #expect(read.status == 75, "two never read it: \(read)")
            let bytes = try #require(Int(read.output.trimmingCharacters(in: .whitespacesAndNewlines)), "\(read)")
            #expect(bytes < 3 * journal, "kvfs wait read \(bytes) bytes in 2 s; the journal is \(journal)")
        }
    }

    @Test("while nobody waits, a mount reading another mount's writes leaves its progress.json alone: 20 writes read, no rewrite (11 at 67afe0a); kvfs wait then gets it published at once")
    func noProgressWhileNobodyWaits() throws {
        try withSandbox { sandbox in
            try Self.mountOneAndTwo(sandbox)
            let two = try Self.status(sandbox, "$T/m2", ".device.id")
            let counts = try sandbox.ok("""
                inotifywait -m -q -e moved_to --format %f $SYNC/devices/\(two) > $T/events & watcher=$!
                sleep 0.3
                for i in $(seq 20); do echo $i > $M/k; sleep 0.05; done
                until [ "$(cat $T/m2/k 2>/dev/null)" = 20 ]; do sleep 0.01; done
                sleep 0.5; grep -c '^progress.json$' $T/events
                kvfs wait k --timeout 10 $S || exit 1
                sleep 0.3; kill $watcher; grep -c '^progress.json$' $T/events
                """).split(separator: "\n").compactMap { Int($0) }
            #expect(counts.count == 2, "\(counts)")
            // At most one: the 10 s schedule's, on a machine slow enough for the test to last that long.
            #expect((counts.first ?? .max) <= 1, "two rewrote its progress.json \(counts.first ?? -1) times with nobody waiting")
            #expect((counts.last ?? 0) > (counts.first ?? .max), "kvfs wait had two publish")
        }
    }

    @Test("getfattr user.kvfs.delivered, kvfs history and kvfs wait (with a mount and without) of a write a device has not read ask for it in waiting.json, naming the writer; once read, they ask nothing")
    func queriesAsk() throws {
        try withSandbox { sandbox in
            try Self.mountOneAndTwo(sandbox)
            let one = try Self.status(sandbox, "$M", ".device.id")
            let other = try Self.status(sandbox, "$T/m2", ".pid")
            let asked = try sandbox.run("""
                f=$SYNC/devices/\(one)/waiting.json
                kill -STOP \(other)
                kvfs set k v1 $S
                ls $M/.kvfs/history/k > /dev/null; [ -e $f ] || echo none
                getfattr --absolute-names --only-values -n user.kvfs.delivered $M/k > /dev/null; kvfs inspect $f $S | jq -c .of; rm $f
                kvfs history k $S > /dev/null; kvfs inspect $f $S | jq -c .of; rm $f
                kvfs wait k --timeout 0.1 $S 2> /dev/null; kvfs inspect $f $S | jq -c .of; rm $f
                kvfs unmount $M
                kvfs wait k --timeout 0.1 $S 2> /dev/null; kvfs inspect $f $S | jq -c .of
                kill -CONT \(other)
                kvfs wait k --timeout 10 $S && echo waited; rm $f
                kvfs history k $S > /dev/null; kvfs wait k --timeout 0 $S; [ -e $f ] || echo none
                kill -CONT \(other)
                """)
            let id = "[\"\(one)\"]"
            #expect(asked.output == "none\n\(id)\n\(id)\n\(id)\n\(id)\nwaited\nnone\n", "\(asked)")
        }
    }

    @Test("concurrent writes on two mounts whose folders are joined afterwards: the mount whose value lost logs one conflict line with the restore command",
          arguments: Sealing.allCases)
    func conflictLine(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            try sandbox.mount("m", sync: "sync-a", state: "state", options: "--device-name one")
            // As a synchronizer would, the store's id (and a sealed store's roster) reaches sync-b before two starts.
            try sandbox.ok("mkdir -p $T/sync-b && cp $T/sync-a/store-id $T/sync-b/ && { [ ! -d $T/sync-a/roster ] || cp -r $T/sync-a/roster $T/sync-b/; }")
            try sandbox.mount("m2", sync: "sync-b", state: "state2", options: "--device-name two")
            try sandbox.ok("echo light > $M/theme; sleep 0.01; echo dark > $T/m2/theme")  // two's is later: it wins
            let lostTime = try sandbox.ok("date -u -d @$(stat -c %.3Y $M/theme) +%Y-%m-%dT%H:%M:%S.%3NZ")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            try sandbox.ok("""
                for d in $T/sync-a/devices/*; do cp -r $d $T/sync-b/devices/; done
                for d in $T/sync-b/devices/*; do [ -e $T/sync-a/devices/$(basename $d) ] || cp -r $d $T/sync-a/devices/; done
                [ ! -d $T/sync-b/roster ] || cp -r $T/sync-b/roster/. $T/sync-a/roster/
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

    @Test("a sequential overwrite on two mounts of one folder is no conflict",
          arguments: Sealing.allCases)
    func sequentialIsNoConflict(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            try Self.mountOneAndTwo(sandbox)
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
