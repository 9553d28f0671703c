import Foundation
import Testing

/// Issue 11: the disk's work (fsync, compaction) is done without the lock
/// that reads and writes need, so reads go on while the disk is slow; fsync
/// on a key still makes it durable.
@Suite("Reads and writes during a slow fsync", .enabled(if: MountEnvironment.canMount && getuid() == 0, "needs FUSE and root (for a loop-mounted ext4)"))
struct DurabilityTests {
    @Test("while fsync on a key waits for 800 MB of the journal disk's dirty data, another key is read at once")
    func readsAndWritesGoOnDuringFsync() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                truncate -s 2G $T/disk.img && mkfs.ext4 -q -F $T/disk.img && mkdir -p $SYNC && mount -o loop,nodelalloc $T/disk.img $SYNC || exit 1
                kvfs mount $M $S || { umount $SYNC; exit 1; }
                echo start > $M/k; echo start > $M/j
                python3 -c 'import os, sys, threading, time
                mount, disk = sys.argv[1], sys.argv[2]
                # Dirty data on the journal disk, not synced: the next fsync there writes it out
                # (ext4, data=ordered, and nodelalloc so that its blocks are allocated at once).
                with open(disk + "/filler", "wb") as f:
                    for i in range(800): f.write(b"\1" * (1 << 20))
                took = {}
                def fsync_key():
                    start = time.monotonic()
                    fd = os.open(mount + "/k", os.O_WRONLY | os.O_APPEND)
                    os.write(fd, b"more\n")
                    os.fsync(fd)
                    os.close(fd)
                    took["fsync"] = time.monotonic() - start
                syncer = threading.Thread(target=fsync_key)
                syncer.start()
                time.sleep(0.05)
                # Reads only: a write appends to the journal, and ext4 may hold a new
                # journal handle while it commits; a read needs nothing but the store lock.
                worst, count = 0.0, 0
                while syncer.is_alive():
                    start = time.monotonic()
                    open(mount + "/j", "rb").read()
                    os.stat(mount + "/j")
                    worst, count = max(worst, time.monotonic() - start), count + 1
                syncer.join()
                print("fsync %.3f s; %d reads meanwhile, the slowest %.3f s" % (took["fsync"], count, worst), file=sys.stderr)
                if took["fsync"] < 0.3:
                    print("fsync too fast to tell")
                else:
                    print("fast" if worst < took["fsync"] / 4 and count >= 5 else "waited: %.3f s of %.3f s" % (worst, took["fsync"]))' $M $SYNC
                cat $M/k
                kvfs unmount $M
                for i in $(seq 1 100); do umount $SYNC 2>/dev/null && break; sleep 0.1; done  # the daemon may still be closing its files
                """#, timeout: 180)
            guard !output.hasPrefix("fsync too fast to tell") else {
                return try skip("DurabilityTests: an fsync of 800 MB took under 0.3 s on this disk: nothing to measure")
            }
            #expect(output == "fast\nstart\nmore\n")
        }
    }
}
