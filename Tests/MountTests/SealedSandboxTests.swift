import Foundation
import KVStore
import Testing

/// The sealed sandbox itself (``Sandbox``, docs/architecture.md § Tests): whichever way a test runs kvfs or
/// opens a store, the store is sealed and each device a member, so that a test run sealed tests a sealed store.
@Suite("A sealed sandbox", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct SealedSandboxTests {
    @Test("a copy of kvfs, mount.fuse3's form with mount(8)'s empty environment, a store opened in process and a program each make a member of one sealed store, and no value is in the clear")
    func everyWayIsSealed() throws {
        try withSandbox(.sealed) { sandbox in
            try sandbox.ok(#"""
                mkdir copy && cp "$(command -v kvfs)" copy/kvfs
                copy/kvfs mount $M $S && echo secret-one > $M/k1
                mkdir $T/m2 && env -i $T/copy/kvfs $SYNC $T/m2 -o state_dir=$T/s2 && echo secret-two > $T/m2/k2
                """#)
            let store = try DeviceStore(syncDirectory: URL(fileURLWithPath: sandbox.syncDirectory),
                                        stateDirectory: URL(fileURLWithPath: sandbox.path + "/s3"), warn: { _ in })
            try store.set(.string("secret-three"), forKey: "k3")
            store.close()
            let output = try sandbox.ok(#"""
                KVFS_STORE=probe \#(MountEnvironment.productsDirectory.path)/kvfs-store-probe set k4 secret-four
                for m in $M $T/m2; do
                    for i in $(seq 100); do [ -f $m/k3 ] && [ -f $m/k1 ] && [ -f $m/k2 ] && break; sleep 0.1; done
                    cat $m/k1 $m/k2 $m/k3
                done
                ls $SYNC/roster | wc -l; ls $XDG_DATA_HOME/kvfs/probe/roster | wc -l
                grep -rl secret $SYNC $XDG_DATA_HOME/kvfs/probe || echo "nothing in the clear"
                """#)
            // The genesis, then one version a device that joined wrote: two devices joined $SYNC's store (m2's, s3's).
            #expect(output == "secret-one\nsecret-two\nsecret-three\n".repeated(2) + "3\n1\nnothing in the clear\n", "\(output)")
        }
    }

    @Test("a program that writes and ends at once, its store never closed, is read by another device: it signs its write as it exits")
    func aProgramSignsAsItExits() throws {
        try withSandbox(.sealed) { sandbox in
            // The probe's device has no other process: no mount's tick, no later open signs for it.
            let output = try sandbox.ok(#"""
                KVFS_STORE=probe \#(MountEnvironment.productsDirectory.path)/kvfs-store-probe set k written-then-exited
                mkdir $T/other && kvfs mount $T/other --store probe --state-dir $T/other-state
                for i in $(seq 100); do [ -f $T/other/k ] && break; sleep 0.1; done
                cat $T/other/k; kvfs unmount $T/other
                """#)
            #expect(output == "written-then-exited\n", "\(output)")
        }
    }
}

private extension String {
    func repeated(_ times: Int) -> String { String(repeating: self, count: times) }
}
