import Foundation
import Testing

/// Issue 38 item 1, through real mounts: a writer of a sealed store's folder without keys plants, alters
/// or puts back the files beside the records (docs/sealed.md § Signed files; the attacks of the issue, on
/// bef202a each one changed what the members saw). Two paired mounts, a and b, and the command line:
/// every value, every version and every name stays, a member goes on writing, and each mount's status
/// and log name the file.
@Suite("A sealed store's signed files attacked through its folder", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct SealedFileAttackTests {
    static let folders = "A=$SYNC/devices/$(cat $T/s-a/device-id); B=$SYNC/devices/$(cat $T/s-b/device-id); "

    /// Waits until both mounts' statuses name `file` as refused, and checks that their logs do.
    func bothRefuse(_ file: String, saying reason: String, _ sandbox: Sandbox) throws {
        for (mount, state) in [("ma", "s-a"), ("mb", "s-b")] {
            let warnings = "jq -r '.warnings[] | select(.kind == \"refused\") | .message' $T/\(mount)/.kvfs/status"
            try waitUntil(seconds: 20, "\(mount) to refuse \(file)", every: 0.05, {
                try sandbox.ok(warnings).contains("/\(file): refused: \(reason)")
            }, failure: { (try? sandbox.ok(warnings)) ?? "" })
            #expect(try sandbox.ok("grep -c -F '/\(file): refused: \(reason)' $T/\(state)/daemon.log || true") != "0\n", "\(mount)'s log")
        }
    }

    @Test("adopted.json, retention.json, writer.json, device.json, progress.json and waiting.json planted, and a signed retention.json put back: no value, version or name changes, a keeps writing, and both mounts name each file")
    func plantedAndReplayedFiles() throws {
        try withSandbox(.plain) { sandbox in  // sealed here, by device a
            try SealedAttackTests.pairedMounts(sandbox)
            try sandbox.ok("for v in 1 2 3 4; do echo v$v > $T/ma/k; done")
            let values = "k v4\nka1 a1\nka2 a2\nka3 a3\nkb1 b1\n"
            let everyValue = #"for k in $(ls $T/MOUNT); do echo "$k $(cat $T/MOUNT/$k)"; done"#
            func valuesStay(_ what: String) throws {
                for mount in ["ma", "mb"] {
                    try waitUntil(seconds: 20, "every value on \(mount) after \(what)", every: 0.05) {
                        try sandbox.ok(everyValue.replacingOccurrences(of: "MOUNT", with: mount)) == values
                    }
                }
            }
            try valuesStay("the writes")
            let versions = "kvfs history k --sync-dir $SYNC --state-dir $T/s-b | tail -n +2 | wc -l"
            #expect(try sandbox.ok(versions) == "4\n")

            // Values vanish: b's folder says a was retired, past every record a wrote.
            try sandbox.ok(Self.folders + #"printf '{"%s":{"at":"1","generation":0,"retired":true,"upTo":"999999999999999999"}}' $(cat $T/s-a/device-id) > $B/adopted.json"#)
            try bothRefuse("adopted.json", saying: "it is not signed", sandbox)
            try valuesStay("adopted.json")
            #expect(try !sandbox.ok("kvfs devices --sync-dir $SYNC --state-dir $T/s-b").contains("retired"))

            // History erased: a's folder turns history off.
            try sandbox.ok(Self.folders + #"printf '{"bytes":0,"days":0,"stamp":"999999999999999999"}' > $A/retention.json"#)
            try bothRefuse("retention.json", saying: "it is not signed", sandbox)
            #expect(try !sandbox.ok("kvfs retention --sync-dir $SYNC --state-dir $T/s-b").contains("off"))
            #expect(try sandbox.ok(versions) == "4\n")

            // A member locked out: a's claim rewritten with another state directory's inode and nonce.
            try sandbox.ok(Self.folders + #"printf '{"host":"x","nonce":"ffff","pid":1,"stateDirectory":"/x","stateInode":1}' > $A/writer.json"#)
            try sandbox.ok("kvfs set k v5 --sync-dir $SYNC --state-dir $T/s-a")
            try waitUntil(seconds: 20, "a's write after its claim was forged, on b", every: 0.05) { try sandbox.ok("cat $T/mb/k") == "v5\n" }
            try sandbox.ok("echo v4 > $T/ma/k")

            // A name spoofed: a's device.json says mallory.
            try sandbox.ok(Self.folders + #"printf '{"name":"mallory"}' > $A/device.json"#)
            try bothRefuse("device.json", saying: "it is not signed", sandbox)
            #expect(try !sandbox.ok("kvfs history k --sync-dir $SYNC --state-dir $T/s-b; kvfs devices --sync-dir $SYNC --state-dir $T/s-b").contains("mallory"))
            let inspected = try sandbox.run(Self.folders + "kvfs inspect $A/device.json --sync-dir $SYNC --state-dir $T/s-b")
            #expect(inspected.status == 1 && inspected.error.contains("device.json: refused: it is not signed"), "\(inspected)")

            // Progress and a wait request forged: a says it closed and read nothing; a asks b to publish.
            try sandbox.ok(Self.folders + #"printf '{"at":"1","closed":true,"own":"999999999999999999","read":{}}' > $A/progress.json"#)
            try bothRefuse("progress.json", saying: "it is not signed", sandbox)
            #expect(try sandbox.ok("kvfs devices --sync-dir $SYNC --state-dir $T/s-b | awk '$2 == \"a\" {print $3}'") == "active\n",
                    "a is not taken for stopped")
            try sandbox.ok(Self.folders + #"printf '{"of":["%s"],"seconds":60}' $(cat $T/s-b/device-id) > $A/waiting.json"#)
            try bothRefuse("waiting.json", saying: "it is not signed", sandbox)

            // A replay: a's signed retention of 10 days put back after it set 90.
            try sandbox.ok(Self.folders + """
                rm $A/retention.json; kvfs retention --days 10 --sync-dir $SYNC --state-dir $T/s-a; cp $A/retention.json $T/older
                kvfs retention --days 90 --sync-dir $SYNC --state-dir $T/s-a
                """)
            try waitUntil(seconds: 20, "b to take a's 90 days", every: 0.05) {
                try sandbox.ok("kvfs retention --sync-dir $SYNC --state-dir $T/s-b").hasPrefix("90 days")
            }
            try sandbox.ok(Self.folders + "cp $T/older $A/retention.json")
            try bothRefuse("retention.json", saying: "replayed", sandbox)
            #expect(try sandbox.ok("kvfs retention --sync-dir $SYNC --state-dir $T/s-b").hasPrefix("90 days"))
            try valuesStay("every file")
            #expect(try sandbox.run(Self.folders + "grep -qF -e '\"host\"' -e '\"name\"' -e '\"days\"' $A/writer.json $A/retention.json").status == 1,
                    "the files a wrote hold nothing in the clear")
        }
    }
}
