import Foundation
import Testing

/// Issue 23 item 8: a device's new name reaches every mount. Two mounts
/// share a sync directory; device one is first known as `vm`, then mounted
/// with `--device-name m1`. The other mount, which learned `vm` first, shows
/// `m1` in history's file names, `kvfs history`, `kvfs devices`,
/// `user.kvfs.delivered` and the status, as the renamed device's own mount does.
@Suite("A device's new name reaches every mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct DeviceRenameTests {
    @Test("renamed with --device-name, a device shows by its new name on the other mount too, in every place a name shows")
    func renameReachesTheOtherMount() throws {
        try withSandbox { sandbox in
            try sandbox.mount("m2", state: "state2", options: "--device-name two")
            try sandbox.mount("m", state: "state", options: "--device-name vm")
            try sandbox.ok("echo v1 > $M/k")
            let two = "--sync-dir $SYNC --state-dir $T/state2"
            #expect(try SharingTests.poll(sandbox, "ls $T/m2/.kvfs/history/k | sed 's/.*@//'", until: "vm\n") == "vm\n", "two learned vm")
            #expect(try SharingTests.poll(sandbox, "getfattr --absolute-names --only-values -n user.kvfs.delivered $T/m2/k", until: "two, vm")
                    == "two, vm")
            try sandbox.ok("kvfs unmount $M")
            try sandbox.mount("m", state: "state", options: "--device-name m1")
            try sandbox.ok("echo v2 > $M/k")
            #expect(try SharingTests.poll(sandbox, "cat $T/m2/k", until: "v2\n") == "v2\n")
            #expect(try sandbox.ok("ls $M/.kvfs/history/k | sed 's/.*@//'") == "m1\nm1\n", "its own mount")
            #expect(try SharingTests.poll(sandbox, "ls $T/m2/.kvfs/history/k | sed 's/.*@//'", until: "m1\nm1\n") == "m1\nm1\n",
                    "the other mount names both versions by the name in force")
            #expect(try sandbox.ok("kvfs history k --json \(two) | jq -r '.[].device'") == "m1\nm1\n")
            #expect(try sandbox.ok("kvfs devices --json \(two) | jq -r '.[].name' | sort") == "m1\ntwo\n")
            #expect(try sandbox.ok("jq -r '.devices[].name' $T/m2/.kvfs/status | sort") == "m1\ntwo\n")
            // As text, not base64: the names are separated by a comma and a space.
            let delivered = "getfattr --absolute-names -n user.kvfs.delivered $T/m2/k | grep delivered"
            #expect(try SharingTests.poll(sandbox, delivered, until: "user.kvfs.delivered=\"two, m1\"\n") == "user.kvfs.delivered=\"two, m1\"\n")
            #expect(try SharingTests.poll(sandbox, "getfattr --absolute-names -n user.kvfs.delivered $M/k | grep delivered",
                                          until: "user.kvfs.delivered=\"m1, two\"\n") == "user.kvfs.delivered=\"m1, two\"\n")
        }
    }
}
