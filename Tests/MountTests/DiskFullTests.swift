import Foundation
import Testing

/// SPEC "File semantics": ENOSPC when the disk under the journal is full,
/// the old value kept, and writes working again once there is room.
@Suite("A full disk under the journal", .enabled(if: MountEnvironment.canMount && getuid() == 0, "needs FUSE and root (to mount a small tmpfs)"))
struct DiskFullTests {
    @Test("a write to a full disk fails with ENOSPC at close, keeps the old value and frees a new name; with room again it works")
    func fullDiskIsENOSPC() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                mkdir -p $SYNC && mount -t tmpfs -o size=1m kvfs-test-full $SYNC
                kvfs mount $M $S || exit 1
                echo old > $M/k
                dd if=/dev/zero of=$SYNC/filler bs=4k status=none 2>/dev/null
                big=$(head -c 8000 /dev/zero | tr '\0' y)
                pywrite $M/k "$big"
                pywrite $M/new "$big"
                cat $M/k; ls $M | tr '\n' ' '; echo
                rm $SYNC/filler
                pywrite $M/k "$big"
                pywrite $M/new fits
                kvfs unmount $M && kvfs mount $M $S || exit 1
                wc -c < $M/k; cat $M/new
                kvfs unmount $M
                for i in $(seq 1 100); do umount $SYNC 2>/dev/null && break; sleep 0.1; done  # the daemon may still be closing its files
                """#)
            #expect(output == "close: ENOSPC\nclose: ENOSPC\nold\nk \nok\nok\n8001\nfits\n")
        }
    }
}
