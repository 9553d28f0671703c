import KVFSBuildInfo

/// Which kvfs this is: the release number and the commit it was built from.
/// `kvfs --version` prints it, and `.kvfs/status` names it, so a daemon
/// left running after an upgrade can be told apart from the new binary.
public enum KVFSVersion {
    /// The release number; the Debian package takes its version from it.
    public static let number = "0.2.0"

    /// The commit (`git describe --always --dirty`), baked in by
    /// `mount-scripts/build.sh`; "unknown commit" for a plain `swift build`.
    public static let commit = String(cString: kvfs_build_commit())

    /// "0.2.0 (commit 1aa29c3)", or "0.2.0 (unknown commit)".
    public static var description: String {
        commit == "unknown commit" ? "\(number) (unknown commit)" : "\(number) (commit \(commit))"
    }
}
