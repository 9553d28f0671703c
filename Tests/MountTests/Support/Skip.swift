import Foundation
import Testing

/// Skips the running test, visibly: the run counts it as skipped, with
/// `reason`, which is printed too (as the suite's other skips are). For
/// what only the test itself can find out, such as a disk too fast to
/// measure; what is known before a test starts is a trait
/// (`.enabled(if: MountEnvironment.canMount, …)`).
func skip(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    print("MountTests: SKIPPED — \(reason)")
    #if compiler(>=6.3)
    try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
    #endif
}

extension Trait where Self == ConditionTrait {
    /// For a test of what only a plain store does (its records' bytes, say): skipped, with `reason`
    /// printed, when `KVFS_TEST_SEALED=1` makes every store sealed.
    static func plainOnly(_ reason: String) -> Self {
        .enabled(if: Sealing.default == .plain, Comment(rawValue: "plain stores only: " + reason))
    }
}

/// What the mount tests need beyond FUSE, found out once: a test that needs
/// what this machine does not allow is skipped, and the reason printed.
enum Privileges {
    /// Whether this process may make a mount namespace and mount in it
    /// (`unshare -m`, `mount -t tmpfs`): CAP_SYS_ADMIN.
    static let canMountInANamespace: Bool = {
        let probe = try? runShell("unshare -m --propagation private sh -c 'mount -t tmpfs kvfs-probe /mnt'", in: "/",
                                  environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], timeout: 20)
        guard probe?.status == 0 else {
            print("MountTests: SKIPPED — the tests that mount a tmpfs or bind mounts: cannot mount in a namespace of its own here (needs CAP_SYS_ADMIN): \(probe?.error ?? "")")
            return false
        }
        return true
    }()
}
