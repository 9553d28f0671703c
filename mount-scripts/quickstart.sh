#!/usr/bin/env bash
# Quick start: installs what is missing, builds and installs kvfs (on PATH,
# with kvfs(1), completions and systemd units: mount-scripts/install.sh), and
# mounts the default store at ~/kvfs (or at the folder given).
# Usage: mount-scripts/quickstart.sh [MOUNTPOINT]
set -euo pipefail
cd "$(dirname "$0")/.."
source mount-scripts/install-layout.sh

mount_point=${1:-$HOME/kvfs}
mount-scripts/install-deps.sh
mount-scripts/install.sh
layout "$(default_prefix)"
mkdir -p "$mount_point"
if grep -q " $mount_point fuse.kvfs " /proc/mounts; then
    echo "kvfs: $mount_point is already mounted"
else
    "$BIN/kvfs" mount "$mount_point"
fi
kvfs=kvfs
[ "$(command -v kvfs)" = "$BIN/kvfs" ] || kvfs=$BIN/kvfs
cat <<TEXT
kvfs: the default store is mounted at $mount_point
  echo dark > $mount_point/theme; cat $mount_point/theme; ls -l $mount_point; df -B1 $mount_point
  $kvfs status          # keys and bytes used, devices
  man kvfs              # every command and option
  $kvfs unmount $mount_point
TEXT
