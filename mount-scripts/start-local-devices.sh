#!/usr/bin/env bash
# start-local-devices.sh — start N kvfs mounts on this machine, each a device
# of one store shared through SYNC_DIR (as N machines on NFS or a shared disk
# would be):
#
#   start-local-devices.sh N SYNC_DIR BASE [-- EXTRA kvfs mount OPTIONS...]
#
# Device K (1..N) is mounted at BASE/devK, keeps its state in BASE/state-devK
# and is named devK. Each `kvfs mount` returns once its mount is ready, so
# `start-local-devices.sh 3 /tmp/s /tmp/b && echo hi > /tmp/b/dev1/k && cat /tmp/b/dev2/k` works
# (the other devices see the write within milliseconds, through inotify).
# Stop them with stop-local-devices.sh BASE.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit "${1:-2}"; }
[ "${1:-}" = -h ] || [ "${1:-}" = --help ] && usage 0
[ $# -ge 3 ] || usage
N=$1 SYNC_DIR=$2 BASE=$3
shift 3
[ "${1:-}" = -- ] && shift   # what remains goes to every `kvfs mount`
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "start-local-devices.sh: N must be a positive number, not '$N'" >&2; exit 2; }
command -v kvfs >/dev/null || { echo "start-local-devices.sh: kvfs is not on PATH" >&2; exit 1; }

mkdir -p "$SYNC_DIR" "$BASE"
for ((k = 1; k <= N; k++)); do
    mountpoint=$BASE/dev$k
    if mountpoint -q "$mountpoint"; then
        echo "dev$k: already mounted at $mountpoint"
        continue
    fi
    mkdir -p "$mountpoint"
    kvfs mount "$mountpoint" --sync-dir "$SYNC_DIR" --state-dir "$BASE/state-dev$k" --device-name "dev$k" "$@"
    echo "dev$k: mounted at $mountpoint"
done
