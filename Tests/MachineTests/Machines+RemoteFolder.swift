import Foundation
import Testing

/// A sync directory that another machine changes behind the kernel's back, as on NFS.
///
/// This machine's kernel has no NFS client (no `nfs` in /proc/filesystems and
/// no modules to load), so a FUSE view stands in for the NFS mount: m1 sees m2's
/// folder through `bindfs` in its own mount namespace. As with NFS, inotify on
/// the view never hears of m2's writes (they do not pass through it), and the
/// kernel caches attributes for a while (FUSE's one second, NFS's three).
extension Machines {
    @Test(.enabled(if: ShellTool.bindfs.isInstalled, "needs bindfs (apt-get install bindfs)"), .timeLimit(.minutes(2)))
    func pollingNoticesWritesToAFolderChangedElsewhere() throws {
        try withCluster(machines: 2, syncthing: false, mount: false) { cluster in
            let (m1, m2) = (cluster.machines[0], cluster.machines[1])
            try m2.mount(integration: false)
            let (view, blindView) = (m1.folder + "/view", m1.folder + "/blind-view")
            try m1.ok("""
                mkdir -p "\(view)" "\(blindView)" "$T/blind" && bindfs "\(m2.sync)" "\(view)" && bindfs "\(m2.sync)" "\(blindView)"
                kvfs mount "$M" --sync-dir "\(view)" --state-dir "$STATE" --polling --poll-interval 0.5
                # The control: a view of its own through inotify alone, polling only hourly. Not the same
                # view: the polling mount's own files there (its progress, published soon after it reads
                # m2's write) would wake it, as a local writer's would on NFS.
                kvfs mount "$T/blind" --sync-dir "\(blindView)" --state-dir "$T/blind-state" --poll-interval 3600
                # And inotify itself: every change it reports on the view, in order, from now on.
                mkdir "\(view)/elsewhere"
                inotifywait -m -r -e create,modify,close_write,moved_to,attrib,delete --format %w%f "\(view)" \
                    >"$T/changes" 2>"$T/inotify.log" & echo $! >"$T/inotify.pid"
                until grep -q 'Watches established' "$T/inotify.log"; do sleep 0.05; done
                """.replacingOccurrences(of: "$T", with: m1.folder))
            let id2 = try m2.deviceID()
            try m2.ok("echo from-m2 > \"$M/k\"")
            try m1.ok("""
                n=0
                until [ "$(cat "$M/k" 2>/dev/null)" = from-m2 ]; do n=$((n + 1)); [ $n -lt 100 ] || exit 1; sleep 0.05; done
                """)
            // A change made through the view after m2's: inotify reports it, so it would have reported m2's first.
            try m1.ok("""
                touch "\(view)/elsewhere/canary"
                until grep -q /elsewhere/canary "$T/changes"; do sleep 0.05; done
                kill $(cat "$T/inotify.pid")
                """.replacingOccurrences(of: "$T", with: m1.folder))
            #expect(try m1.ok("grep -c '/devices/\(id2)/' \"\(m1.folder)/changes\" || true") == "0\n",
                    "inotify heard of a write made elsewhere: the view is no stand-in for NFS")
            #expect(try m1.run("cat \"\(m1.folder)/blind/k\"").status != 0, "the inotify-only mount saw a write made elsewhere")
            try m1.ok("echo from-m1 > \"$M/j\"")
            try m2.ok("""
                n=0
                until [ "$(cat "$M/j" 2>/dev/null)" = from-m1 ]; do n=$((n + 1)); [ $n -lt 100 ] || exit 1; sleep 0.05; done
                """)
            try m1.ok("kvfs unmount \"\(m1.folder)/blind\"; kvfs unmount \"$M\"; fusermount3 -u \"\(view)\"; fusermount3 -u \"\(blindView)\"")
        }
    }
}

/// A program a test needs besides the usual ones.
enum ShellTool: String {
    case bindfs

    /// Whether it is on `PATH`; prints why a test skips when it is not.
    var isInstalled: Bool {
        let found = (try? runShell("command -v \(rawValue)", in: "/", environment: Machine.hostEnvironment, timeout: 10))?.status == 0
        if !found { print("MachineTests: \(rawValue) is not installed; the tests that need it are skipped") }
        return found
    }
}

/// A command of the built `kvfs` that another part of the work brings (issue 8's retire and health).
enum KVFSFeature: String {
    /// `kvfs retire`.
    case retire
    /// `kvfs status --stale-after` and the devices' health.
    case health
    /// `kvfs seal` (sealed stores, issue 26: the sealed journal).
    case seal

    /// Whether the built `kvfs` has it (its help says so); prints why a test skips when it has not.
    var isBuilt: Bool {
        let probe = switch self {
        case .retire: "retire --help | grep -q -- --force"
        case .health: "status --help | grep -q -- --stale-after"
        case .seal: "seal --help"
        }
        let built = (try? runShell("\(MountEnvironment.kvfs) \(probe)", in: "/", environment: Machine.hostEnvironment, timeout: 20))?.status == 0
        if !built { print("MachineTests: SKIPPED — \(missing)") }
        return built
    }

    /// Why its test skips.
    var missing: Comment {
        switch self {
        case .retire: "the built kvfs has no `kvfs retire` yet (issue 8, not on this branch)"
        case .health: "the built kvfs has no `kvfs status --stale-after` yet (issue 8, not on this branch)"
        case .seal: "the built kvfs has no `kvfs seal` yet (issue 26's sealed journal, not on this branch)"
        }
    }
}
