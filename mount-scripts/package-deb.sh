#!/usr/bin/env bash
# Builds the Debian package kvfs_VERSION_ARCH.deb with dpkg-deb: kvfs with
# the Swift runtime linked in (it needs only libfuse3 and the C and C++
# libraries, so a machine without Swift runs it), kvfs(1), bash/zsh/fish
# completions and the systemd units, in Debian's places under /usr.
# `apt install ./kvfs_VERSION_ARCH.deb` installs it; `apt purge kvfs` removes
# it and never touches a store. Prints the package's path.
# Usage: mount-scripts/package-deb.sh [OUTPUT_DIR]   (default: .build/deb)
set -euo pipefail
cd "$(dirname "$0")/.."

output=$(realpath -m "${1:-.build/deb}")
built=$(mount-scripts/build.sh)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

DESTDIR=$stage mount-scripts/install.sh --prefix /usr --bin-dir "$built"
strip --strip-unneeded "$stage/usr/bin/kvfs"
# The binary may need only system libraries: no Swift runtime, no Foundation.
if ldd "$stage/usr/bin/kvfs" | grep -iE 'swift|foundation|dispatch|icu'; then
    echo "package-deb.sh: kvfs links a Swift library dynamically; build it with --static-swift-stdlib" >&2
    exit 1
fi
version=$("$stage/usr/bin/kvfs" --version | cut -d' ' -f2)
arch=$(dpkg --print-architecture)
mkdir -p "$stage/DEBIAN" "$output"
cat >"$stage/DEBIAN/control" <<CONTROL
Package: kvfs
Version: $version
Architecture: $arch
Maintainer: $(git log -1 --format='%an <%ae>')
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: fuse3, libfuse3-3 (>= 3.2), libssl3 | libssl3t64, libcurl4 | libcurl4t64, libc6 (>= 2.34), libstdc++6, libgcc-s1
Recommends: man-db
Section: utils
Priority: optional
Description: NSUbiquitousKeyValueStore for Linux, as a FUSE filesystem
 kvfs is a small, quota-limited key-value store of property-list values
 (1024 keys, 1 MiB in all) that follows you across machines. Each key is a
 file at the mount point; several mounts share a store through a sync
 directory (a shared folder, NFS, Syncthing, Unison), merged last writer
 wins. Built from commit $("$stage/usr/bin/kvfs" --version | sed 's/.*(\(.*\))/\1/').
CONTROL
# systemd reads the new units at once (when it runs).
for script in postinst postrm; do
    printf '#!/bin/sh\nset -e\nif [ -d /run/systemd/system ]; then systemctl --system daemon-reload >/dev/null || true; fi\n' >"$stage/DEBIAN/$script"
    chmod 755 "$stage/DEBIAN/$script"
done
package="$output/kvfs_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group "$stage" "$package" >&2
echo "$package"
