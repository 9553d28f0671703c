import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 24 item 8: `kvfs-store@.service` mounts a store whose identifier
/// holds `-` (`kvfs-store@my-app`), which systemd's `%I` would unescape to
/// `my/app`.
///
/// No systemd manager runs here, so the test cannot start the unit. What it
/// proves: `systemd-analyze --user verify` accepts the unit under that
/// instance name; and the unit's own `Environment=` and `ExecStart=` lines,
/// with its specifiers replaced as systemd.unit(5) says (`%i` the instance as
/// written, `%I` the instance through `systemd-escape --unescape`, `%h` the
/// home folder) and then run by the shell (which splits `$KVFS_OPTIONS` and
/// keeps `${KVFS_MOUNTPOINT}` whole, as systemd does), mount the store
/// `my-app` at `~/kvfs-stores/my-app`. It does not prove how systemd itself
/// passes the environment or notices readiness.
@Suite("The kvfs-store@ unit", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct StoreUnitTests {
    @Test("kvfs-store@my-app passes systemd-analyze verify, and its ExecStart, expanded as systemd expands it, mounts the store my-app at ~/kvfs-stores/my-app")
    func identifierWithDash() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                mkdir units man man/man1 && echo '.TH KVFS 1' > man/man1/kvfs.1  # verify checks Documentation=man:kvfs(1)
                sed "s|@BINDIR@|$(dirname "$(command -v kvfs)")|" \#(Repository.root)/mount-scripts/systemd/user/kvfs-store@.service > units/kvfs-store@.service
                ln -s kvfs-store@.service units/kvfs-store@my-app.service
                MANPATH=$T/man systemd-analyze --user verify units/kvfs-store@my-app.service && echo "verified"
                i=my-app I=$(systemd-escape --unescape my-app)
                expand() { sed -e "s|%i|$i|g" -e "s|%I|$I|g" -e "s|%h|$HOME|g" units/kvfs-store@.service; }
                export KVFS_MOUNTPOINT=$(expand | sed -n 's/^Environment=KVFS_MOUNTPOINT=//p') KVFS_OPTIONS=
                start=$(expand | sed -n 's/^ExecStart=//p')
                echo "$start" | sed "s|$(dirname "$(command -v kvfs)")|BIN|; s|$HOME|~|g"
                echo "$KVFS_MOUNTPOINT" | sed "s|$HOME|~|"
                mkdir -p "$KVFS_MOUNTPOINT"
                eval "$start" 2>daemon.err & daemon=$!
                for n in $(seq 1 200); do [ -e "$KVFS_MOUNTPOINT/.kvfs/status" ] && break; sleep 0.05; done
                echo on-my-app > "$KVFS_MOUNTPOINT/k"
                jq -r .mountPoint "$KVFS_MOUNTPOINT/.kvfs/status" | sed "s|$HOME|~|"
                kvfs unmount "$KVFS_MOUNTPOINT"; wait $daemon; echo "exited: $?"
                kvfs get k --store my-app
                kvfs stores | tail -n +2 | cut -d' ' -f1
                """#, timeout: 60)
            #expect(output == """
                verified
                BIN/kvfs mount ${KVFS_MOUNTPOINT} --store my-app --foreground $KVFS_OPTIONS
                ~/kvfs-stores/my-app
                ~/kvfs-stores/my-app
                exited: 0
                on-my-app
                my-app

                """)
        }
    }
}
