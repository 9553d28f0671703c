#!/usr/bin/env bash
# Quick start: installs what is missing, builds kvfs, and mounts the default
# store at ~/kvfs (or at the folder given), then prints where it is.
# Usage: mount-scripts/quickstart.sh [MOUNTPOINT]
set -euo pipefail
cd "$(dirname "$0")/.."

mount_point=${1:-$HOME/kvfs}
mount-scripts/install-deps.sh
swift build -c release --product kvfs
kvfs=$(swift build -c release --show-bin-path)/kvfs
mkdir -p "$mount_point"
if grep -q " $mount_point fuse.kvfs " /proc/mounts; then
    echo "kvfs: $mount_point is already mounted"
else
    "$kvfs" mount "$mount_point"
fi
cat <<TEXT
kvfs: the default store is mounted at $mount_point
  echo dark > $mount_point/theme; cat $mount_point/theme; ls -l $mount_point; df -B1 $mount_point
  $kvfs status          # keys and bytes used, devices
  $kvfs unmount $mount_point
TEXT
