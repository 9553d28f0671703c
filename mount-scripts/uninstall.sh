#!/usr/bin/env bash
# Removes what mount-scripts/install.sh installed: kvfs, kvfs(1), the
# completions and the systemd units, from /usr/local (as root) and from
# ~/.local. Stores, state directories and logs are never touched; running
# mounts keep running (unmount them with kvfs unmount first).
# Usage: mount-scripts/uninstall.sh [--prefix DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source mount-scripts/install-layout.sh

prefixes=()
case ${1:-} in
    --prefix) prefixes=("${2:?--prefix needs a folder}") ;;
    "") [ "$(id -u)" -ne 0 ] || prefixes+=(/usr/local); prefixes+=("$HOME/.local") ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 64 ;;
esac
for prefix in "${prefixes[@]}"; do
    layout "$prefix"
    for file in "$BIN/kvfs" "$MAN1/kvfs.1" "$BASH_COMPLETIONS/kvfs" "$ZSH_COMPLETIONS/_kvfs" \
                "$FISH_COMPLETIONS/kvfs.fish" "$USER_UNITS/kvfs@.service" "$USER_UNITS/kvfs-store@.service" \
                "$USER_UNITS/kvfs-sync.service" ${SYSTEM_UNITS:+"$SYSTEM_UNITS/kvfs@.service"}; do
        if [ -e "$file" ]; then
            rm -f "$file"
            echo "kvfs: removed $file" >&2
        fi
    done
done
if grep -q " fuse.kvfs " /proc/mounts 2>/dev/null; then
    echo "kvfs: note: kvfs mounts are still running (see: grep fuse.kvfs /proc/mounts); their daemons stop at kvfs unmount" >&2
fi
