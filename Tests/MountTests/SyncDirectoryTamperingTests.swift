import Foundation
import Testing

/// Issue 18 (items 2 and 5) through the real command: what someone who can
/// write the sync directory, or its parent, does to a device off the paths
/// the other tests walk.
@Suite("The sync directory tampered with", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct SyncDirectoryTamperingTests {
    @Test("folders and a FIFO planted at the temporary names of writer.json, progress.json, seen.log and last-stamp: the next mount starts, writes and unmounts")
    func foldersPlantedAtTemporaryNames() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                kvfs mount $M $S && echo v > $M/k && kvfs unmount $M
                id=$(cat $STATE/device-id)
                mkdir $SYNC/devices/$id/.writer.json.tmp $SYNC/devices/$id/.progress.json.tmp $STATE/.seen.log.tmp
                mkfifo $STATE/.last-stamp.tmp
                kvfs mount $M $S && echo w > $M/k && kvfs unmount $M && echo unmounted
                kvfs get k $S

                """#)
            #expect(output == "unmounted\nw\n")
        }
    }

    @Test("the sync directory moved under a mount and an empty folder put in its place: the mount goes on writing the folder it opened, writes nothing into the new one, and kvfs status says so")
    func syncDirectoryMovedUnderAMount() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                echo v > $M/k
                mv $SYNC $T/moved && mkdir $SYNC
                echo w > $M/j
                # two refreshes after the move (each used to write the device's folder into $SYNC again)
                for n in 1 2; do
                    t=$(jq -r .lastSync $M/.kvfs/status)
                    for i in $(seq 200); do [ "$(jq -r .lastSync $M/.kvfs/status)" != "$t" ] && break; sleep 0.05; done
                done
                find $SYNC | wc -l
                kvfs status $S | grep -c "the sync directory $SYNC was moved (now at $T/moved)"
                jq -r '.warnings[].kind' $M/.kvfs/status
                kvfs unmount $M
                kvfs get j --sync-dir $T/moved --state-dir $STATE

                """#)
            #expect(output == "1\n1\nsyncDirectoryMoved\nw\n")
        }
    }
}
