#!/usr/bin/env bash
# Counts the requests of idle minutes of `kvfs sync` in moto's request log
# (docs/buckets.md § What it costs): two machines share a bucket in moto's S3
# emulator on 127.0.0.1; once both have synced, one runs `kvfs sync` with the
# defaults and its third minute is counted, then `kvfs sync --fastest 2
# --slowest 2` for a minute. Counts requests, by kind; takes some 4 minutes.
# With --mounted, the syncing machine's store is mounted meanwhile (its
# device rewrites progress.json every 30 s, a heartbeat).
# Usage: mount-scripts/bucket-requests.sh [--mounted]   (the kvfs of .build/debug, or $KVFS_BINARY)
set -euo pipefail
cd "$(dirname "$0")/.."
kvfs=${KVFS_BINARY:-$PWD/.build/debug/kvfs}
moto=$(command -v moto_server || echo "${XDG_CACHE_HOME:-$HOME/.cache}/kvfs/moto/bin/moto_server")
work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$moto" -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto_pid=$!
sync_pid=
mounted=
trap 'kill $sync_pid $moto_pid 2>/dev/null; [ -z "$mounted" ] || machine desktop "$kvfs" unmount "$work/m"; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
curl -s -X PUT "http://127.0.0.1:$port/kvfs-requests" >/dev/null
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_ENDPOINT_URL="http://127.0.0.1:$port"
machine() { local home=$work/$1; shift; env HOME="$home" XDG_DATA_HOME="$home/data" XDG_STATE_HOME="$home/state" XDG_CONFIG_HOME="$home/config" "$@"; }
for m in laptop desktop; do
    mkdir -p "$work/$m"
    machine $m "$kvfs" bucket add s3://kvfs-requests/root >/dev/null
    machine $m "$kvfs" set "written-on-$m" yes
done
machine laptop "$kvfs" sync --once; machine desktop "$kvfs" sync --once; machine laptop "$kvfs" sync --once
if [ "${1:-}" = --mounted ]; then
    mkdir "$work/m"; machine desktop "$kvfs" mount "$work/m"; mounted=yes
fi

# The requests logged from line $1 on, by kind: PUT/GET of heads or objects, LIST.
count() {
    tail -n +"$1" "$work/moto.log" | grep -o '"[A-Z][A-Z]* /[^ ]*' \
        | sed -E 's|"([A-Z]+) /kvfs-requests/root/(heads\|objects)/.*|\1 \2|; s|"GET /kvfs-requests/?\?list-type.*|LIST|' | sort | uniq -c
}
minute() {  # minute SKIP_SECONDS kvfs-sync-options...: counts the minute after SKIP_SECONDS of `kvfs sync`
    local skip=$1; shift
    # env, not the function: $! is then kvfs itself, which the kill below stops.
    env HOME="$work/desktop" XDG_DATA_HOME="$work/desktop/data" XDG_STATE_HOME="$work/desktop/state" \
        XDG_CONFIG_HOME="$work/desktop/config" "$kvfs" sync "$@" & sync_pid=$!
    sleep "$skip"; local from=$(($(wc -l <"$work/moto.log") + 1)); sleep 60
    kill $sync_pid; wait $sync_pid 2>/dev/null || true; sync_pid=
    count "$from"
}
echo "the third idle minute of kvfs sync (defaults: --fastest 2 --slowest 60), one peer:"
minute 120
echo "an idle minute of kvfs sync --fastest 2 --slowest 2, one peer:"
minute 10 --fastest 2 --slowest 2
