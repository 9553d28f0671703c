import Foundation
import Testing

/// docs/files.md § File semantics: with `-o allow_other` other users come in, and the
/// permissions the mount shows are enforced.
@Suite("Permissions with allow_other", .enabled(if: MountEnvironment.canMount && getuid() == 0, "needs FUSE and root (to act as another user)"))
struct PermissionTests {
    @Test("another user reads keys but cannot write, create, remove or rename them (the modes are 0644 and 0755)")
    func otherUserMeetsTheModes() throws {
        try withSandbox { sandbox in
            try sandbox.ok("chmod 755 $T")  // mkdtemp made it 0700: the other user must reach the mount point
            try sandbox.mount(options: "-o allow_other")
            // uid and gid 65534 (nobody), no supplementary groups: not the mounting user (root here).
            let output = try sandbox.ok(#"""
                echo mine > $M/k
                ls -ld $M $M/k | awk '{print $1}'
                other() { setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c "$1" 2>&1 | sed 's/.*: //'; }
                other "cat $M/k"
                other "echo theirs > $M/k"
                other "echo new > $M/new"
                other "rm $M/k"
                other "mv $M/k $M/moved"
                other "touch -d 2001-01-01 $M/k"
                other "setfattr -n user.kvfs.type -v data $M/k"
                cat $M/k; ls $M | tr '\n' ' '; echo
                echo "mine again" > $M/k && cat $M/k
                """#)
            #expect(output == """
                drwxr-xr-x
                -rw-r--r--
                mine
                Permission denied
                Permission denied
                Permission denied
                Permission denied
                Permission denied
                Permission denied
                mine
                k 
                mine again

                """)
        }
    }

    @Test("an allow_other mount whose daemon was killed during writes is cleaned up by the next kvfs mount, 3 times")
    func killedAllowOtherMountIsCleanedUp() throws {
        try withSandbox { sandbox in
            try sandbox.ok("chmod 755 $T")
            let output = try sandbox.ok(#"""
                for round in 1 2 3; do
                    kvfs mount $M $S -o allow_other || exit 1
                    pid=$(jq .pid $M/.kvfs/status)
                    ( i=0; while :; do i=$((i + 1)); echo $i | dd of=$M/k$((i % 7)) status=none 2>/dev/null || break; done ) &
                    sleep 0.2; kill -9 $pid; wait
                done
                kvfs mount $M $S -o allow_other && ls $M | wc -l
                """#)
            #expect(output == "7\n")
        }
    }
}
