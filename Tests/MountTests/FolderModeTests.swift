import Foundation
import Testing

/// Issue 18 item 7: kvfs never chmods. `kvfs mount` makes a missing state
/// directory (and its missing parents) as the store makes its folders:
/// mkdir with 0700, which the umask reduces; an existing one keeps its mode.
@Suite("Folder modes", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct FolderModeTests {
    @Test("kvfs mount makes the state directory with mkdir 0700 less the umask, as the store makes the sync directory; no chmod")
    func stateDirectoryIsNotChmodded() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                (umask 0277; kvfs mount $M --sync-dir $T/sync --state-dir $T/made/state) && kvfs unmount $M
                stat -c '%a %n' $T/made $T/made/state $T/sync | sed "s|$T/||"
                mkdir -m 0751 $T/kept
                (umask 0022; kvfs mount $M --sync-dir $T/sync2 --state-dir $T/kept) && kvfs unmount $M
                (umask 0022; kvfs mount $M --sync-dir $T/sync3 --state-dir $T/usual/state) && kvfs unmount $M
                stat -c '%a %n' $T/kept $T/usual $T/usual/state $T/sync3 | sed "s|$T/||"
                chmod -R u+w $T/made $T/sync  # for the sandbox's removal
                """#)
            #expect(output == "500 made\n500 made/state\n500 sync\n751 kept\n700 usual\n700 usual/state\n700 sync3\n")
        }
    }
}
