#!/usr/bin/env bash
# Benchmarks kvfs against yardsticks in one run: ../shared/bench/fsops.c times
# create, overwrite, read, warm read, stat, readdir and unlink through
# syscalls on tmpfs, on memfs and memfs_ll (the smallest libfuse filesystems:
# what FUSE itself costs) and on a kvfs mount; then the mount time of a store
# with a long journal history, and the kvfs daemon's resident memory.
# Usage: mount-scripts/benchmark.sh [KEYS] [VALUE_BYTES] [ROUNDS] [HISTORY_RECORDS]
set -euo pipefail
cd "$(dirname "$0")/.."

keys=${1:-500} bytes=${2:-64} rounds=${3:-7} history=${4:-1000000}
bench_src=${KVFS_BENCH_SRC:-../shared/bench}
work=$(mktemp -d /tmp/kvfs-bench.XXXXXX)
mounts=()
cleanup() {
    for m in "${mounts[@]}"; do
        "${bin:-/nonexistent}/kvfs" unmount "$m" 2>/dev/null || fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

mount-scripts/install-deps.sh
swift build -c release --product kvfs >&2
swift build -c release --product kvfs-bench >&2
bin=$(swift build -c release --show-bin-path)
mkdir -p "$work/bin"
cc -O2 "$bench_src/fsops.c" -o "$work/bin/fsops"
cc -O2 "$bench_src/memfs.c" $(pkg-config --cflags --libs fuse3) -o "$work/bin/memfs"
cc -O2 -Wall "$bench_src/memfs_ll.c" $(pkg-config --cflags --libs fuse3) -o "$work/bin/memfs_ll"

mkdir -p "$work"/{tmpfs,memfs,memfs_ll,kvfs,sync,state}
mount -t tmpfs -o size=64m tmpfs "$work/tmpfs" && mounts+=("$work/tmpfs")
"$work/bin/memfs" "$work/memfs" && mounts+=("$work/memfs")
"$work/bin/memfs_ll" "$work/memfs_ll" && mounts+=("$work/memfs_ll")
"$bin/kvfs" mount "$work/kvfs" --sync-dir "$work/sync" --state-dir "$work/state" && mounts+=("$work/kvfs")

for fs in tmpfs memfs memfs_ll kvfs; do
    "$work/bin/fsops" "$work/$fs" "$keys" "$bytes" "$rounds" | sed "s/^/$fs\t/" >> "$work/results.tsv"
done
pid=$(jq -r .pid "$work/kvfs/.kvfs/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")

echo "fsops: $keys keys of $bytes bytes, median of $rounds rounds, ns per operation (ratio to tmpfs, to memfs)"
python3 - "$work/results.tsv" <<'PY'
import re, sys, collections
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    fs, rest = line.rstrip("\n").split("\t", 1)
    match = re.match(r"(.*?)\s+\d+ ops\s+(\d+) ns/op", rest)   # fsops: NAME COUNT ops NS ns/op (median of R)
    rows.setdefault(match.group(1), {})[fs] = float(match.group(2))
fss = ["tmpfs", "memfs", "memfs_ll", "kvfs"]
print(f"{'operation':28}" + "".join(f"{f:>12}" for f in fss) + f"{'kvfs/tmpfs':>12}{'kvfs/memfs':>12}{'kvfs/ll':>10}")
for op, v in rows.items():
    print(f"{op:28}" + "".join(f"{v.get(f, float('nan')):>12.0f}" for f in fss)
          + f"{v['kvfs']/v['tmpfs']:>12.2f}{v['kvfs']/v['memfs']:>12.2f}{v['kvfs']/v['memfs_ll']:>10.2f}")
PY
echo "kvfs daemon RSS after the run: $((rss / 1024)) MiB ($rss KiB)"

"$bin/kvfs" unmount "$work/kvfs"
mounts=("${mounts[@]/$work\/kvfs}")
"$bin/kvfs-bench" history --records "$history" --sync-dir "$work/history-sync" --state-dir "$work/history-state"
mkdir -p "$work/history"
start=$(date +%s%N)
"$bin/kvfs" mount "$work/history" --sync-dir "$work/history-sync" --state-dir "$work/history-state"
ready=$(date +%s%N)
mounts+=("$work/history")
ls "$work/history" > /dev/null
echo "mount of a store with $history journal records of history: $(( (ready - start) / 1000000 )) ms (kvfs mount until ready)"
"$bin/kvfs" unmount "$work/history"
