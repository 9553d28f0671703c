import Foundation

/// A shell script for ``Sandbox/run(_:timeout:)`` that runs `body` (sh) in a
/// private mount namespace where /dev/fuse has `fuseMode` (0666 as on a stock
/// Debian, or 0600 as where it is not the user's), so that the user `nobody`
/// can mount, or not, without changing anything outside the test.
///
/// In `body`: `$d` is a folder of nobody's (readable by all) holding a copy
/// of kvfs at `$d/kvfs`, and `as_nobody COMMAND…` runs a command as nobody
/// with HOME and XDG folders in `$d`. The output shows `$d` as `D`.
func asNobody(fuseMode: String, _ body: String) -> String {
    #"""
    d=$(mktemp -d /tmp/kvfs-nobody-XXXXXX); trap 'rm -rf "$d"' EXIT
    cp "$(command -v kvfs)" $d/kvfs; mkdir $d/m; chown -R nobody $d; chmod 755 $d
    cat > $d/body.sh <<'BODY'
    as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=$d XDG_DATA_HOME=$d/data XDG_STATE_HOME=$d/state "$@"; }
    \#(body)
    BODY
    d=$d unshare -m sh -c "mknod $d/fuse c 10 229 && chmod \#(fuseMode) $d/fuse && mount --bind $d/fuse /dev/fuse && . $d/body.sh" 2>&1 |
        sed "s|$d|D|g"
    """#
}
