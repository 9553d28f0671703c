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
}
