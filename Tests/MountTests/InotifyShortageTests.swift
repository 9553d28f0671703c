import Foundation
import Testing

/// A user whose inotify instances are used up (`fs.inotify.max_user_instances`,
/// 128 by default, which editors and synchronizers share) still gets other
/// devices' changes, and is told why they come slower.
@Suite("A mount when inotify is used up", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct InotifyShortageTests {
    @Test("with no inotify instance left the mount says so once and polls every second, whatever --poll-interval asked",
          .enabled(if: geteuid() == 0, "needs root to run the mount as another user (nobody), whose inotify instances the test uses up"))
    func mountWithoutInotifyPolls() throws {
        try withSandbox { sandbox in
            // nobody mounts while a process of theirs holds every inotify instance they may have.
            let result = try sandbox.run(asNobody(fuseMode: "666", #"""
                cat > $d/hog.py <<'PY'
                import ctypes, subprocess, sys
                libc = ctypes.CDLL(None)
                held = []
                while (fd := libc.inotify_init1(0o2000000)) >= 0: held.append(fd)
                sys.exit(subprocess.run(sys.argv[1:]).returncode)
                PY
                as_nobody python3 $d/hog.py $d/kvfs mount $d/m --sync-dir $d/sync --state-dir $d/state --poll-interval 3600
                as_nobody $d/kvfs set k from-elsewhere --sync-dir $d/sync --state-dir $d/other
                for i in $(seq 50); do [ "$(as_nobody cat $d/m/k 2>/dev/null)" = from-elsewhere ] && break; sleep 0.2; done
                as_nobody cat $d/m/k; as_nobody $d/kvfs unmount $d/m
                grep -c inotify $d/state/daemon.log; grep inotify $d/state/daemon.log | sed 's/^[^ ]* warning/warning/'
                """#))
            #expect(result.output == """
                from-elsewhere
                1
                warning kvfs.store: cannot watch D/sync with inotify (Too many open files): noticing other devices' changes by polling every 1.0 s instead; to get them at once, raise fs.inotify.max_user_instances (sysctl) and remount

                """, "\(result)")
        }
    }
}
