#!/usr/bin/env bash
# Quick start: installs what is missing, builds and installs kvfs (on PATH,
# with kvfs(1), completions and systemd units: mount-scripts/install.sh), and
# mounts the default store at ~/kvfs (or at the folder given).
# Usage: mount-scripts/quickstart.sh [--bin-dir DIR] [MOUNTPOINT]
#   --bin-dir DIR  install the kvfs (and generate-manual) already built in this
#                  products folder instead of building them (install.sh --bin-dir)
set -euo pipefail
cd "$(dirname "$0")/.."
source mount-scripts/install-layout.sh

install_options=()
if [ "${1:-}" = --bin-dir ]; then
    install_options=(--bin-dir "${2:?--bin-dir needs a folder}")
    shift 2
fi
mount_point=${1:-$HOME/kvfs}
mount-scripts/install-deps.sh
mount-scripts/install.sh "${install_options[@]}"
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
