import Foundation
import Testing

/// docs/history.md: `.kvfs/history/` as files, and `kvfs history`,
/// `kvfs restore`, `kvfs undelete` and `kvfs retention`, with a mount and
/// without; each restore reaches another device of the store.
@Suite("History as files and through the command line", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct HistoryMountTests {
    /// A version's name: the UTC time to the millisecond, `@`, the device name, and `.removed` for a removal.
    static let namePattern = #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z@[a-z0-9]+(~[0-9]+)?(\.removed)?$"#

    /// Runs `script` until it prints `want` (up to 10 s); returns what it printed last.
    private func poll(_ sandbox: Sandbox, _ script: String, until want: String) throws -> String {
        var output = ""
        try TestSupport.poll(seconds: 10, every: 0.1) {
            output = try sandbox.run(script).output
            return output == want
        }
        return output
    }

    @Test("a folder per key, removed keys included; a read-only file per version named by time and device, its content the value, its mtime the write time")
    func versionsAsFiles() throws {
        try withSandbox { sandbox in
            try sandbox.mount(options: "--device-name laptop")
            // A few ms apart: versions of one millisecond would be named with ~2 (HistoryTests.names), which ls sorts apart.
            try sandbox.ok("echo one > $M/theme; sleep 0.01; echo two > $M/theme; sleep 0.01; rm $M/theme; sleep 0.01; echo three > $M/theme")
            try sandbox.ok("echo gone > $M/gone && rm $M/gone")
            #expect(try sandbox.ok("ls $M/.kvfs") == "changes.log\nhistory\nstatus\n")
            #expect(try sandbox.ok("ls $M/.kvfs/history") == "gone\ntheme\n")
            let names = try sandbox.ok("ls $M/.kvfs/history/theme").split(separator: "\n").map(String.init)
            #expect(names.count == 4, "\(names)")
            #expect(names.allSatisfy { $0.range(of: Self.namePattern, options: .regularExpression) != nil }, "\(names)")
            #expect(names.filter { $0.hasSuffix(".removed") }.count == 1)
            // ls -tr lists oldest first, as the names sort; contents are the values' file forms; a removal is empty.
            #expect(try sandbox.ok("cd $M/.kvfs/history/theme && ls -tr --full-time | awk 'NR>1 {print $NF}'").split(separator: "\n").map(String.init)
                    == names.sorted { $0 < $1 })
            #expect(try sandbox.ok("cd $M/.kvfs/history/theme && for f in $(ls); do printf '%s|' \"$(cat $f)\"; done")
                    == "one|two||three|")
            #expect(try sandbox.ok("size $M/.kvfs/history/theme/*") == "4\n4\n0\n6\n")
            // The mtime is the write time the name gives, to the millisecond.
            let first = names[0]
            let mtime = try sandbox.ok("stat -c %.3Y $M/.kvfs/history/theme/\(first)").trimmingCharacters(in: .whitespacesAndNewlines)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let written = try #require(formatter.date(from: String(first.prefix { $0 != "@" })))
            #expect(mtime == String(format: "%.3f", written.timeIntervalSince1970))
            // Read-only, and ordinary tools work on it.
            #expect(try sandbox.run("echo x > $M/.kvfs/history/theme/\(first)").status != 0)
            #expect(try sandbox.run("rm -f $M/.kvfs/history/theme/\(first)").status != 0)
            #expect(try sandbox.run("touch $M/.kvfs/history/theme/new").status != 0)
            #expect(try sandbox.ok("grep -rl two $M/.kvfs/history") == "\(sandbox.mountPoint)/.kvfs/history/theme/\(names[1])\n")
            #expect(try sandbox.run("diff $M/.kvfs/history/theme/\(names[0]) $M/.kvfs/history/theme/\(names[3])").output
                    == "1c1\n< one\n---\n> three\n")
            #expect(try sandbox.ok("ls $M/.kvfs/history/gone | sed 's/.*@//'") == "laptop\nlaptop.removed\n")
            #expect(try sandbox.run("ls $M/.kvfs/history/never").status != 0)
        }
    }

    @Test("cp of a version onto its key restores it, and cp onto a removed key undeletes it; each reaches another mount, whose history is the same",
          arguments: Sealing.allCases)
    func restoreByCopy(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            try sandbox.mount(options: "--device-name laptop")
            try sandbox.mount("m2", state: "state2", options: "--device-name desk")
            try sandbox.ok("echo first > $M/theme; sleep 0.01; echo second > $M/theme; sleep 0.01")
            try sandbox.ok("cp \"$M/.kvfs/history/theme/$(ls $M/.kvfs/history/theme | head -1)\" $M/theme")
            #expect(try poll(sandbox, "cat $T/m2/theme", until: "first\n") == "first\n")
            try sandbox.ok("rm $T/m2/theme")
            #expect(try poll(sandbox, "cat $M/theme 2>&1 >/dev/null | wc -l", until: "1\n") == "1\n")
            try sandbox.ok("cp \"$M/.kvfs/history/theme/$(ls $M/.kvfs/history/theme | grep -v removed | tail -1)\" $M/theme")
            #expect(try poll(sandbox, "cat $T/m2/theme", until: "first\n") == "first\n")
            let listing = try sandbox.ok("ls -l --full-time $M/.kvfs/history/theme | awk 'NR>1 {print $5, $6, $7, $9}'")
            #expect(listing.split(separator: "\n").count == 5, "\(listing)")
            #expect(try poll(sandbox, "ls -l --full-time $T/m2/.kvfs/history/theme | awk 'NR>1 {print $5, $6, $7, $9}'", until: listing) == listing)
            #expect(try sandbox.ok("ls $T/m2/.kvfs/history/theme | sed 's/.*@//' | tr '\\n' ' '")
                    == "laptop laptop laptop desk.removed laptop ")
        }
    }

    @Test("kvfs history lists a key's versions oldest first, with --json; restore and undelete write a new version, with a mount and without, that another device reads",
          arguments: Sealing.allCases)
    func commandLine(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            try sandbox.mount(options: "--device-name laptop")
            try sandbox.ok("kvfs set theme dark $S && kvfs set theme light $S && kvfs rm theme $S")
            let lines = try sandbox.ok("kvfs history theme $S").split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
            #expect(lines.first == ["VERSION", "KIND", "SIZE", "VALUE"])
            #expect(lines.dropFirst().map { Array($0.dropFirst()) } == [["value", "5", "dark"], ["value", "6", "light"], ["removal", "0", "-", "current,", "read", "by", "laptop"]])
            let json = try JSONSerialization.jsonObject(with: Data(try sandbox.ok("kvfs history theme --json $S").utf8)) as? [[String: Any]]
            #expect(json?.map { $0["kind"] as? String } == ["value", "value", "removal"])
            #expect(json?.map { $0["device"] as? String } == ["laptop", "laptop", "laptop"])
            #expect(json?.map { $0["current"] as? Bool } == [false, false, true], "a removal is its key's current version")
            let dark = try #require(json?.first?["version"] as? String)
            #expect(try sandbox.ok("kvfs undelete theme $S") == "theme: restored \(lines[2][0])\n")
            #expect(try sandbox.ok("cat $M/theme") == "light\n")
            #expect(try sandbox.ok("kvfs restore theme \(dark) $S") == "theme: restored \(dark)\n")
            #expect(try sandbox.ok("cat $M/theme") == "dark\n")
            #expect(try sandbox.ok("kvfs history theme $S | tail -1").hasSuffix("dark   current, read by laptop\n"), "the current line names the devices that have read it")
            let refused = try sandbox.run("kvfs restore theme 2000-01-01T00:00:00.000Z@nobody $S")
            #expect(refused.status == 1 && refused.error.contains("no version '2000-01-01T00:00:00.000Z@nobody'"), "\(refused)")
            #expect(try sandbox.run("kvfs undelete theme $S").status == 1, "theme is not removed")
            #expect(try sandbox.run("kvfs history never $S").status == 1)

            // Without a mount: the same commands open the store; another device reads what they wrote.
            try sandbox.ok("kvfs unmount $M")
            try sandbox.ok("kvfs rm theme $S && kvfs undelete theme $S")
            #expect(try sandbox.ok("kvfs get theme --sync-dir $SYNC --state-dir $T/other") == "dark\n")
            let light = try sandbox.ok("kvfs history theme --json $S | python3 -c 'import json,sys; print([v[\"version\"] for v in json.load(sys.stdin) if v[\"value\"] == \"light\"][0])'")
            try sandbox.ok("kvfs restore theme \(light.trimmingCharacters(in: .newlines)) $S")
            #expect(try sandbox.ok("kvfs get theme --sync-dir $SYNC --state-dir $T/other") == "light\n")
            #expect(try sandbox.ok("kvfs history theme --sync-dir $SYNC --state-dir $T/other | wc -l") == "9\n")
        }
    }

    @Test("the snapshot of a 100 MB retention, past 16 MiB, reads back whole: after a remount, and on a device that joins later")
    func aSnapshotPast16MiBSurvivesARemount() throws {
        try withSandbox { sandbox in
            try sandbox.ok("kvfs retention --bytes 100000000 $S")
            try sandbox.mount()
            // The issue's reproduction: 80 values of 693 KB, 55 MB of history, so that the device's
            // folder holds a snapshot or a segment past 16 MiB, the old read cap.
            try sandbox.ok("echo small > $M/b && for i in $(seq 80); do head -c 520000 /dev/urandom | base64 -w0 > $M/k; done", timeout: 300)
            try sandbox.ok("kvfs unmount $M")
            let largest = try sandbox.ok("stat -c %s $SYNC/devices/*/* | sort -n | tail -1")
            #expect((Int(largest.dropLast()) ?? 0) > 16 << 20, "\(largest)")
            try sandbox.mount()
            #expect(try sandbox.ok("cat $M/b") == "small\n")
            #expect(try sandbox.ok("ls $M/.kvfs/history/k | wc -l") == "80\n")
            #expect(try sandbox.ok("kvfs get b --sync-dir $SYNC --state-dir $T/late") == "small\n", "a device that joins later")
            #expect(try sandbox.ok("kvfs status $S") .contains("incomplete") == false)
        }
    }

    @Test("kvfs retention prints and sets the store's retention, which every device reads; 0 turns history off")
    func retentionSetting() throws {
        try withSandbox { sandbox in
            try sandbox.mount(options: "--device-name laptop")
            #expect(try sandbox.ok("kvfs retention $S") == "30 days, 8388608 bytes\n")
            #expect(try sandbox.ok("kvfs retention --days 5 $S") == "5 days, 8388608 bytes\n")
            #expect(try sandbox.ok("kvfs retention --sync-dir $SYNC --state-dir $T/other") == "5 days, 8388608 bytes\n")
            try sandbox.ok("echo one > $M/k && echo two > $M/k")
            #expect(try sandbox.ok("ls $M/.kvfs/history/k | wc -l") == "2\n")
            #expect(try sandbox.ok("kvfs retention --bytes 0 --sync-dir $SYNC --state-dir $T/other") == "off\n")
            #expect(try poll(sandbox, "ls $M/.kvfs/history/k | wc -l", until: "1\n") == "1\n", "history off: the current value alone")
            #expect(try sandbox.run("kvfs retention --days -1 $S").status == 64)
            // History was off (0 bytes), so the days come back to their default with the bytes.
            #expect(try sandbox.ok("kvfs retention --bytes 100000000 $S") == "30 days, 100000000 bytes\n", "a 100 MB history is read back whole")
            let refused = try sandbox.run("kvfs retention --bytes 134217729 $S")
            #expect(refused.status == 64 && refused.error.contains("134217728") && refused.error.contains("128 MiB"), "\(refused)")
            #expect(refused.error.split(separator: "\n").filter { $0.contains("134217728") }.count == 1, "one line names the limit: \(refused)")
            #expect(try sandbox.ok("kvfs retention $S") == "30 days, 100000000 bytes\n")
        }
    }
}
