#!/usr/bin/env bash
# stop-local-devices.sh — unmount every device start-local-devices.sh mounted
# under BASE (BASE/dev1, BASE/dev2, ...):
#
#   stop-local-devices.sh BASE
#
# `kvfs unmount` returns once the device has committed what was written and
# exited. Mount points and state directories stay, so starting again brings
# the same devices back.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit "${1:-2}"; }
[ "${1:-}" = -h ] || [ "${1:-}" = --help ] && usage 0
[ $# -eq 1 ] || usage
BASE=$1
command -v kvfs >/dev/null || { echo "stop-local-devices.sh: kvfs is not on PATH" >&2; exit 1; }

status=0
shopt -s nullglob
for mountpoint in "$BASE"/dev[0-9]*; do
    mountpoint -q "$mountpoint" || continue
    if kvfs unmount "$mountpoint"; then
        echo "$(basename "$mountpoint"): unmounted"
    else
        status=1   # say so, and go on with the others
    fi
done
exit $status
