import Foundation
import Testing

/// docs/files.md § Limits and errors: ENOSPC when the disk under the journal is full,
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

    @Test("a small disk filled with values gets its room back when keys are removed: the journal is compacted at the next full-disk write")
    func removedKeysGiveTheirRoomBack() throws {
        try withSandbox { sandbox in
            // A snapshot needs a little room of its own: the 8 KiB of `other`, a file of the user's, removed at the end.
            let output = try sandbox.ok(#"""
                mkdir -p $SYNC && mount -t tmpfs -o size=256k kvfs-test-small $SYNC
                head -c 8192 /dev/zero > $SYNC/other
                kvfs mount $M $S || exit 1
                big=$(head -c 20000 /dev/zero | tr '\0' y)
                for i in $(seq 1 30); do result=$(pywrite $M/k$i "$big"); [ "$result" = ok ] || break; done
                echo "$result"
                rm $M/k* && echo removed
                rm $SYNC/other
                pywrite $M/again "$big"
                kvfs unmount $M && kvfs mount $M $S || exit 1
                ls $M | tr '\n' ' '; wc -c < $M/again
                kvfs unmount $M
                for i in $(seq 1 100); do umount $SYNC 2>/dev/null && break; sleep 0.1; done
                """#)
            #expect(output == "close: ENOSPC\nremoved\nok\nagain 20001\n", "\(output)")
        }
    }

    @Test("a compaction whose snapshot finds no room loses nothing: writes go on, survive a remount, and reach other devices before the snapshot is written (the segment it left ends with a close mark)")
    func unfinishedCompactionLosesNothing() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                mkdir -p $SYNC && mount -t tmpfs -o size=1m kvfs-test-unfinished $SYNC
                kvfs mount $M $S || exit 1
                value=$(head -c 20000 /dev/zero | tr '\0' v)
                for i in $(seq 1 20); do pywrite $M/k$i "$value" > /dev/null; done
                dd if=/dev/zero of=$SYNC/filler bs=1k count=560 status=none 2>/dev/null
                pywrite $M/big "$(head -c 60000 /dev/zero | tr '\0' b)"    # no room: compacts, and its snapshot finds none either
                echo small > $M/small && cat $M/small
                kvfs unmount $M && kvfs mount $M $S || exit 1
                cat $M/small; ls $M | wc -l
                kvfs get small --sync-dir $SYNC --state-dir $T/other 2>&1 | tail -1    # another device: already
                rm $SYNC/filler
                for i in $(seq 1 100); do [ "$(kvfs get small --sync-dir $SYNC --state-dir $T/other 2>/dev/null)" = small ] && break; sleep 0.1; done
                kvfs get small --sync-dir $SYNC --state-dir $T/other
                kvfs unmount $M && kvfs mount $M $S || exit 1
                cat $M/small $M/k20 | wc -c; ls $M | wc -l
                kvfs unmount $M
                for i in $(seq 1 100); do umount $SYNC 2>/dev/null && break; sleep 0.1; done
                """#)
            #expect(output == "close: ENOSPC\nsmall\nsmall\n21\nsmall\nsmall\n20007\n21\n", "\(output)")
        }
    }
}
