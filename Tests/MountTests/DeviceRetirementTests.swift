import Foundation
import Testing

/// Issue 8.1 through real mounts: three devices on one sync directory; the
/// third is retired (with `kvfs retire`, or by removing its folder by hand,
/// as the README once said) and the others keep every value and removal it won.
@Suite("Retiring a device on real mounts", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct DeviceRetirementTests {
    /// What m1 and m2 must show once m3 is gone: m3's `k0`, its `r0`, and no `d0` (m3 removed it).
    static let expected = "k0 r0 \nm3-new\nonly m3\n"
    static let show = #"ls $T/$1 | grep -vx sentinel | tr '\n' ' '; echo; cat $T/$1/k0 $T/$1/r0 2>&1"#

    /// m1 writes `k0` and `d0`; m3 overwrites `k0`, writes `r0`, removes `d0`; m3 unmounts.
    private func threeMounts(_ sandbox: Sandbox) throws {
        for name in ["m1", "m2", "m3"] { try sandbox.mount(name, state: "s-" + name, options: "--device-name " + name) }
        try sandbox.ok("echo m1-old > $T/m1/k0; echo doomed > $T/m1/d0")
        #expect(try SharingTests.poll(sandbox, "cat $T/m3/d0 2>&1", until: "doomed\n") == "doomed\n")
        try sandbox.ok("echo m3-new > $T/m3/k0; echo 'only m3' > $T/m3/r0; rm $T/m3/d0")
        for name in ["m1", "m2"] {
            #expect(try SharingTests.poll(sandbox, "set -- \(name); " + Self.show, until: Self.expected) == Self.expected)
        }
        try sandbox.ok("kvfs unmount $T/m3")
    }

    /// Polls until `mount` shows what it must; then, once a later write of
    /// another device (a new value of `sentinel`) has reached it, so that it
    /// has read the sync directory again since, checks it still does.
    private func keeps(_ sandbox: Sandbox, _ mount: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try SharingTests.poll(sandbox, "set -- \(mount); " + Self.show, until: Self.expected) == Self.expected,
                sourceLocation: sourceLocation)
        let mark = UUID().uuidString
        try sandbox.ok("kvfs set sentinel \(mark) --sync-dir $SYNC --state-dir $T/s-sentinel", sourceLocation: sourceLocation)
        #expect(try SharingTests.poll(sandbox, "cat $T/\(mount)/sentinel", until: mark + "\n") == mark + "\n",
                "the sentinel did not reach \(mount)", sourceLocation: sourceLocation)
        #expect(try sandbox.ok("set -- \(mount); " + Self.show) == Self.expected, sourceLocation: sourceLocation)
    }

    @Test("kvfs retire keeps what the device won on every device, and removes its folder; the retired machine mounted again changes nothing",
          arguments: Sealing.allCases)
    func retire(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            try threeMounts(sandbox)
            let output = try sandbox.ok(#"""
                id=$(cat $T/s-m3/device-id)
                kvfs retire m3 --sync-dir $SYNC --state-dir $T/s-m1
                [ -e $SYNC/devices/$id ] || echo folder gone
                kvfs devices --sync-dir $SYNC --state-dir $T/s-m2 | awk '{print $2, $3}' | sort
                """#)
            #expect(output.hasPrefix("retired m3 ("), "\(output)")
            #expect(output.contains("its 2 values and 1 removal that still count are kept in"), "\(output)")
            #expect(output.hasSuffix("folder gone\nNAME STATE\nm1 active\nm2 this\nm3 retired\n"), "\(output)")
            for mount in ["m1", "m2"] { try keeps(sandbox, mount) }
            try sandbox.ok("kvfs unmount $T/m1")
            try sandbox.mount("m1", state: "s-m1")
            try sandbox.mount("m4", state: "s-m4", options: "--device-name m4")
            for mount in ["m1", "m4"] { try keeps(sandbox, mount) }
            // The retired machine, mounted again as it was, changes nothing. Plain, it joins as a new device and
            // says so; sealed, the roster it trusts still names it (retire without --revoke), so it keeps its id
            // and only what it writes from now on is read (docs/sealed.md § Converting a store).
            let id = try sandbox.ok("cat $T/s-m3/device-id")
            try sandbox.mount("m3", state: "s-m3")
            try keeps(sandbox, "m3")
            let said = try sandbox.ok("grep -c 'was retired by m1 (kvfs retire); .*/s-m3 joins the store again as a new device' $T/s-m3/daemon.log || true")
            #expect(said == (sealing == .plain ? "1\n" : "0\n"))
            #expect((try sandbox.ok("cat $T/s-m3/device-id") == id) == (sealing == .sealed))
            for mount in ["m1", "m4"] { try keeps(sandbox, mount) }
        }
    }

    @Test("a device folder removed by hand costs nothing; status says it vanished and how to retire it", arguments: Sealing.allCases)
    func folderRemovedByHand(_ sealing: Sealing) throws {
        try withSandbox(sealing) { sandbox in
            try threeMounts(sandbox)
            try sandbox.ok("rm -rf $SYNC/devices/$(cat $T/s-m3/device-id)")
            for mount in ["m1", "m2"] { try keeps(sandbox, mount) }
            let status = try sandbox.ok(#"""
                jq -r '.devices[] | select(.name == "m3") | .state' $T/m1/.kvfs/status
                jq -r '.warnings[] | select(.kind == "vanished") | .fix' $T/m1/.kvfs/status
                kvfs status --sync-dir $SYNC --state-dir $T/s-m2 | grep -c 'vanished without anyone retiring it'
                """#)
            #expect(status.hasPrefix("vanished\nif it is gone for good, run `kvfs retire "), "\(status)")
            #expect(status.hasSuffix("\n1\n"), "\(status)")
            try sandbox.mount("m4", state: "s-m4", options: "--device-name m4")
            try keeps(sandbox, "m4")
        }
    }
}
