#!/usr/bin/env bash
# Tests the Debian package as a user meets it: builds it, installs it with
# apt, runs kvfs with the Swift toolchain hidden (as on a machine without
# Swift), checks the man page, completions and units (systemd-analyze
# verify), mounts a store through an fstab line (mount(8) finds /usr/bin/kvfs
# with no PATH of ours), writes and reads a key, unmounts, and purges: every
# file goes, the store stays. Needs root (apt, mount); says so and skips otherwise.
# Usage: mount-scripts/test-package.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
    echo "test-package.sh: SKIPPED — installing a package and mounting through fstab need root"
    exit 0
fi
if dpkg-query -W -f='${Status}' kvfs 2>/dev/null | grep -q "install ok installed"; then
    echo "test-package.sh: a kvfs package is installed already; not touching it" >&2
    exit 1
fi
work=$(mktemp -d /tmp/kvfs-package-test.XXXXXX)
passes=0 failures=0
check() {  # check DESCRIPTION COMMAND...: runs the command, says ok or FAILED
    if "${@:2}" >"$work/out" 2>&1; then
        echo "ok: $1"
        passes=$((passes + 1))
    else
        echo "FAILED: $1"; sed 's/^/    /' "$work/out"
        failures=$((failures + 1))
    fi
}
cleanup() {
    grep -q " $work/m fuse.kvfs " /proc/mounts && umount -l "$work/m"
    dpkg-query -W kvfs >/dev/null 2>&1 && apt-get purge -y -qq kvfs >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

deb=$(mount-scripts/package-deb.sh "$work/deb")
echo "test-package.sh: built $(basename "$deb") ($(du -h "$deb" | cut -f1))"
check "apt installs the package" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb"
check "kvfs needs no Swift library (ldd)" sh -c '! ldd /usr/bin/kvfs | grep -iE "swift|foundation|dispatch"'
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
check "kvfs runs with the Swift toolchain ($toolchain) hidden" \
    unshare -m sh -c "mount -t tmpfs none '$toolchain' && /usr/bin/kvfs --version | grep -q '^kvfs '"
check "man kvfs finds kvfs(1)" sh -c 'man -aw kvfs | grep -qx /usr/share/man/man1/kvfs.1.gz && man kvfs 2>/dev/null | grep -q "kvfs mount"'
check "completions for bash, zsh and fish" test -s /usr/share/bash-completion/completions/kvfs \
    -a -s /usr/share/zsh/vendor-completions/_kvfs -a -s /usr/share/fish/vendor_completions.d/kvfs.fish
mkdir -p "$work/units"
ln -s /usr/lib/systemd/system/kvfs@.service "$work/units/kvfs@srv-kv.service"
check "the system unit passes systemd-analyze verify" systemd-analyze verify "$work/units/kvfs@srv-kv.service"
mkdir -p "$work/user-units"
ln -s /usr/lib/systemd/user/kvfs@.service "$work/user-units/kvfs@home-me-kv.service"
check "the user unit passes systemd-analyze --user verify" \
    env XDG_RUNTIME_DIR="$work" systemd-analyze --user verify "$work/user-units/kvfs@home-me-kv.service"
ln -s /usr/lib/systemd/user/kvfs-store@.service "$work/user-units/kvfs-store@com.example.notes.service"
check "the per-store user unit passes systemd-analyze --user verify" \
    env XDG_RUNTIME_DIR="$work" systemd-analyze --user verify "$work/user-units/kvfs-store@com.example.notes.service"
check "the bucket sync user unit passes systemd-analyze --user verify" \
    env XDG_RUNTIME_DIR="$work" systemd-analyze --user verify /usr/lib/systemd/user/kvfs-sync.service

mkdir -p "$work/m" "$work/sync"
echo "$work/sync $work/m fuse.kvfs state_dir=$work/state,device_name=packaged,x-systemd.automount,_netdev,nofail 0 0" >"$work/fstab"
check "mount through an fstab line (mount -T), with no PATH" env -i /usr/bin/mount -T "$work/fstab" "$work/m"
check "echo and cat through the mount" sh -c "echo hello > '$work/m/greeting' && [ \"\$(cat '$work/m/greeting')\" = hello ]"
check "the daemon is kvfs in ps" sh -c "ps -o comm= -p \$(jq .pid '$work/m/.kvfs/status') | grep -qx kvfs"
pid=$(jq .pid "$work/m/.kvfs/status")
check "umount ends the mount and the daemon" sh -c "umount '$work/m' && for i in \$(seq 50); do kill -0 $pid 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
check "apt purge removes every file" sh -c 'apt-get purge -y -qq kvfs >/dev/null && ! dpkg -L kvfs 2>/dev/null &&
    for f in /usr/bin/kvfs /usr/share/man/man1/kvfs.1.gz /usr/share/bash-completion/completions/kvfs \
             /usr/lib/systemd/system/kvfs@.service /usr/lib/systemd/user/kvfs@.service \
             /usr/lib/systemd/user/kvfs-store@.service /usr/lib/systemd/user/kvfs-sync.service; do [ ! -e "$f" ] || exit 1; done'
check "the store is left as it was" sh -c "[ -f '$work/sync/store-id' ] && ls '$work/sync/devices' | grep -q ."
echo "test-package.sh: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
