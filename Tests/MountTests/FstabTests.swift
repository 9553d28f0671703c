import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/install.md § fstab and `mount -t fuse.kvfs`: fstab and `mount -t fuse.kvfs SYNC_DIR MOUNTPOINT`,
/// which make mount.fuse3 run `kvfs SYNC_DIR MOUNTPOINT -o OPTIONS`.
@Suite("fstab and mount -t", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct FstabTests {
    static let check = #"""
        grep " $M " /proc/mounts | cut -d' ' -f1,3
        echo hello > $M/k; cat $M/k
        jq -r .stateDirectory $M/.kvfs/status
        kvfs unmount $M && echo unmounted
        kvfs get k $S
        """#

    func expected(_ sandbox: Sandbox) -> String {
        "kvfs:\(sandbox.syncDirectory) fuse.kvfs\nhello\n\(sandbox.stateDirectory)\nunmounted\nhello\n"
    }

    @Test("kvfs SYNC_DIR MOUNTPOINT -o state_dir=… mounts, as mount.fuse3 runs it")
    func helperForm() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok("kvfs $SYNC $M -o state_dir=$STATE,device_name=fstab,noauto,x-systemd.automount && echo mounted\n"
                                        + "jq -r .device.name $M/.kvfs/status\n" + Self.check)
            #expect(output == "mounted\nfstab\n" + expected(sandbox))
        }
    }

    @Test("mount.fuse3 with -t fuse.kvfs (what mount -t fuse.kvfs runs), and mount -t fuse 'kvfs#SYNC_DIR'",
          .enabled(if: access("/sbin/mount.fuse3", X_OK) == 0, "/sbin/mount.fuse3 is not installed"),
          .enabled(if: geteuid() == 0, "mount(8) needs root"))
    func mountHelper() throws {
        try withSandbox { sandbox in
            // mount(8) runs its helpers without PATH, so `mount -t fuse.kvfs` finds kvfs only in a system
            // folder; the helper's own command line is exercised directly, with the built kvfs first on PATH.
            let direct = try sandbox.ok("/sbin/mount.fuse3 $SYNC $M -t fuse.kvfs -o state_dir=$STATE && echo mounted\n" + Self.check)
            #expect(direct == "mounted\n" + expected(sandbox))
            let viaMount = try sandbox.ok("mount -t fuse \"$(command -v kvfs)#$SYNC\" $M -o state_dir=$STATE && echo mounted\n" + Self.check)
            #expect(viaMount == "mounted\n" + expected(sandbox))
        }
    }
}
