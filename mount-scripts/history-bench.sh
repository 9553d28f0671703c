#!/usr/bin/env bash
# The history bounds (docs/history.md), as root, against the kvfs in BIN:
#  1. the daemon's RSS with a full quota (1024 keys of 1 KiB) and a full
#     history (8 MiB of older values, the default retention), after every
#     version was listed and read: bound 40 MiB;
#  2. `ls .kvfs/history/KEY` of a key with 10,000 versions: bound 50 ms
#     (the best of 5, each listing made afresh by the daemon; `ls -l` too);
#  3. `kvfs mount` until ready, of the store of 1 (full quota, full history): bound 200 ms.
# mount-scripts/benchmark.sh runs it as its part 7 with its release build (KVFS_BENCH_ONLY=history: alone).
# Usage: mount-scripts/history-bench.sh [BIN]   (default: the release build's folder)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-$(swift build -c release --show-bin-path)}
work=$(mktemp -d /tmp/kvfs-history-bench.XXXXXX)
mounted=()
cleanup() {
    for m in "${mounted[@]}"; do "$bin/kvfs" unmount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
ms() { echo $(( ($2 - $1) / 1000000 )); }
mount_store() { # NAME: mounts $work/NAME on $work/NAME-sync, echoes how long `kvfs mount` took in ms
    mkdir -p "$work/$1"
    local start end
    start=$(date +%s%N)
    "$bin/kvfs" mount "$work/$1" --sync-dir "$work/$1-sync" --state-dir "$work/$1-state" >&2
    end=$(date +%s%N)
    mounted+=("$work/$1")
    ms "$start" "$end"
}

# ---- 1: RSS with a full quota and a full history ----
mount_store full > /dev/null
python3 - "$work/full" <<'PY'
import sys
d = sys.argv[1]
def write(i, round):  # 1023 bytes as a string's file: 1024 keys fill both quotas
    with open(f"{d}/key{i:04}", "wb") as f: f.write(b"%04d" % round + b"x" * 1018 + b"\n")
for round in range(10):  # 9 rounds of older values: 9 MiB, past the 8 MiB the retention keeps
    for i in range(1024): write(i, round)
PY
python3 - "$work/full/.kvfs/history" <<'PY'
import os, sys
h, versions = sys.argv[1], 0
for key in os.listdir(h):  # every version listed and read, as `grep -r` would
    for name in os.listdir(f"{h}/{key}"):
        open(f"{h}/{key}/{name}", "rb").read()
        versions += 1
print(f"history of the full store: {versions} versions listed and read", file=sys.stderr)
PY
status=$(cat "$work/full/.kvfs/status")
pid=$(jq -r .pid <<<"$status")
rss=$(( $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024 ))
kept=$(find "$work/full/.kvfs/history" -type f | wc -l)
echo "daemon RSS with a full store ($(jq -c '[.keys.used, .bytes.used]' <<<"$status") keys, bytes) and a full history ($kept versions kept of 10240 written): $rss MiB (bound 40 MiB)"

# ---- 3: mount time of that store ----
"$bin/kvfs" unmount "$work/full"; mounted=()
best=""
for _ in 1 2 3; do
    took=$(mount_store full)
    mounted=("$work/full")
    ls "$work/full" > /dev/null
    "$bin/kvfs" unmount "$work/full"; mounted=()
    [ -z "$best" ] || [ "$took" -lt "$best" ] && best=$took
done
echo "kvfs mount of the store with a full quota and a full history, until ready: $best ms (best of 3; bound 200 ms)"

# ---- 2: listing a key's 10,000 versions ----
mount_store long > /dev/null
python3 - "$work/long" <<'PY'
import sys
for i in range(10000):
    with open(f"{sys.argv[1]}/k", "wb") as f: f.write(b"%d\n" % i)
PY
listing() { # COMMAND: the best of 5 timings in ms, a second apart (each listing made afresh)
    local best="" start end took
    for _ in 1 2 3 4 5; do
        sleep 1.1
        start=$(date +%s%N); $1 > /dev/null; end=$(date +%s%N)
        took=$(ms "$start" "$end")
        [ -z "$best" ] || [ "$took" -lt "$best" ] && best=$took
    done
    echo "$best"
}
count=$(ls "$work/long/.kvfs/history/k" | wc -l)
echo "ls .kvfs/history/k of $count versions: $(listing "ls $work/long/.kvfs/history/k") ms (best of 5; bound 50 ms); ls -l: $(listing "ls -l $work/long/.kvfs/history/k") ms"
