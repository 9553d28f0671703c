#!/usr/bin/env bash
# Benchmarks kvfs against yardsticks in one run (issue 11), as root:
#  1. fsops: create, overwrite, read, warm read, stat, readdir and unlink
#     through syscalls, on tmpfs, memfs and memfs_ll (the smallest libfuse
#     filesystems: what FUSE itself costs), kvfs, and kvfs with its store sealed
#     (what sealing costs a mount's writes and reads), rounds interleaved;
#  2. `ls -l` of 1000 keys, and a shell loop creating, overwriting and reading 1000 keys;
#  3. FUSE requests per shell operation, counted from `-d` (debug) output, kvfs next to memfs;
#  4. overwrite latency (p50, p99) during a 30 s write loop with the journal on
#     ext4 on a loop device (made and removed here), while fsyncs and compactions run;
#  5. mount time of a store with a 10^6-record history, and the daemon's RSS with a full store;
#  6. a sync directory with 20,000 empty device folders: the mount's time, and the
#     slowest of `cat`s of one key repeated every 10 ms for 12 s after it.
#  7. the history bounds (mount-scripts/history-bench.sh): RSS with a full quota and a full
#     8 MiB history, listing a key's 10,000 versions, mounting a store with a full history.
#  8. `kvfs set k v && kvfs wait k` mount to mount (until the other mount has read the value):
#     on one shared folder, and through a Syncthing pair with --syncthing, idle and under load.
#  9. the scale test's long form (Tests/KVStoreTests/History/ScaleTests.swift, the test build):
#     KVFS_SCALE_MB megabytes (200) written by two devices with history at its largest retention
#     (128 MiB, which this passes), a third joining late; every value and every version's every
#     field compared on all three; prints the snapshot and segment sizes reached, and its time.
# 10. a write's cost as history grows (kvfs-bench history-writes): 200,000 writes of small integers
#     with the default retention, in InMemoryKeyValueStore, through the library on disk and through
#     a mount, the time per write at 1k, 10k, 100k and 200k versions.
# 11. what sealing costs (kvfs-bench sealed, the release build): the same store plain and sealed in one run:
#     KVFS_SEALED_WRITES (20000) writes and reads through the library; a store whose other device's journal
#     holds KVFS_SEALED_RECORDS (10^6) records, written through the library as any write is, opened through
#     the library (with the last signature of each read checked, and with each: docs/sealed.md § Checking
#     signatures) and mounted with kvfs, from `kvfs mount` until every value reads back through the mount;
#     and Syncthing's propagation mount to mount (kvfs-bench mounts --sealed both: KVFS_SEALED_PROBES (100) probes,
#     idle and under load, the pair plain and sealed in turn), in a network namespace that has only its loopback.
# Usage: mount-scripts/benchmark.sh [KEYS] [VALUE_BYTES] [ROUNDS] [HISTORY_RECORDS] [LOOP_SECONDS]
#        KVFS_BENCH_ONLY=folders mount-scripts/benchmark.sh   (section 6 alone; KVFS_BENCH_FOLDERS=20000)
#        KVFS_BENCH_ONLY=history mount-scripts/benchmark.sh   (section 7 alone)
#        KVFS_BENCH_ONLY=fsops mount-scripts/benchmark.sh     (sections 1 to 3: the before-and-after comparison)
#        KVFS_BENCH_ONLY=scale mount-scripts/benchmark.sh     (section 9 alone; KVFS_SCALE_MB=200)
#        KVFS_BENCH_ONLY=history-writes mount-scripts/benchmark.sh   (section 10 alone; KVFS_BENCH_WRITES=200000)
#        KVFS_BENCH_ONLY=sealed mount-scripts/benchmark.sh   (section 11 alone: builds kvfs and kvfs-bench in release, no test target;
#                                                             KVFS_SEALED_WRITES=20000 KVFS_SEALED_RECORDS=1000000 KVFS_SEALED_ROUNDS=1
#                                                             KVFS_SEALED_PROBES=100)
# The machine should be otherwise idle: the script prints the load average it started with.
# The yardsticks are C programs in mount-scripts/yardsticks/ (fsops.c, memfs.c,
# memfs_ll.c), built here with the system's cc at -O2 against libfuse3
# (pkg-config fuse3); each file's header says what it measures.
set -euo pipefail
cd "$(dirname "$0")/.."

keys=${1:-500} bytes=${2:-64} rounds=${3:-7} history=${4:-1000000} seconds=${5:-30}
work=$(mktemp -d /tmp/kvfs-bench.XXXXXX)
mounts=() loopdev=""
cleanup() {
    for m in "${mounts[@]}"; do
        [ -n "$m" ] || continue
        "${bin:-/nonexistent}/kvfs" unmount "$m" 2>/dev/null || fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    jobs -p | xargs -r kill 2>/dev/null || true
    [ -z "$loopdev" ] || { umount -l "$work/ext4" 2>/dev/null || true; losetup -d "$loopdev" 2>/dev/null || true; }
    [ -z "${netns:-}" ] || ip netns del "$netns" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
forget() { local gone=$1 m; local kept=(); for m in "${mounts[@]}"; do [ "$m" = "$gone" ] || kept+=("$m"); done; mounts=("${kept[@]}"); }

# Builds kvfs and kvfs-bench in release (neither compiles a test target or swift-syntax); $bin is where they are.
build_release() {
    swift build -c release --product kvfs >&2
    swift build -c release --product kvfs-bench >&2
    bin=$(swift build -c release --show-bin-path)
}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
mount-scripts/install-deps.sh >&2

# ---- 6: many device folders: mount time, and reads while the health check and refreshes run ----
# A sync directory planted with KVFS_BENCH_FOLDERS (20,000) empty folders named like devices; the store
# is made first (with one key) so that they join it. The mount is timed until `kvfs mount` returns (the
# daemon serves); then a `cat` of the key every 10 ms for 12 s (the health check runs every 5 s, a
# refresh every second), each timed from fork to exit.
many_folders() {
    local folders=${KVFS_BENCH_FOLDERS:-20000} d="$work/folders"
    mkdir -p "$d"
    "$bin/kvfs" mount "$d" --sync-dir "$work/folders-sync" --state-dir "$work/folders-state" && mounts+=("$d")
    echo value > "$d/k"
    "$bin/kvfs" unmount "$d"; forget "$d"
    python3 - "$work/folders-sync/devices" "$folders" <<'PY'
import os, sys
for n in range(1, int(sys.argv[2]) + 1): os.mkdir(f"{sys.argv[1]}/{n:032x}", 0o700)
PY
    local start finish
    start=$(date +%s%N)
    "$bin/kvfs" mount "$d" --sync-dir "$work/folders-sync" --state-dir "$work/folders-state"
    finish=$(date +%s%N)
    mounts+=("$d")
    echo
    echo "mount of a sync directory with $folders empty device folders: $(( (finish - start) / 1000000 )) ms (kvfs mount until ready)"
    python3 - "$d/k" <<'PY'
import subprocess, sys, time
times, end = [], time.monotonic() + 12
while time.monotonic() < end:
    t = time.monotonic()
    subprocess.run(["cat", sys.argv[1]], stdout=subprocess.DEVNULL, check=True)
    times.append((time.monotonic() - t) * 1000)
    time.sleep(0.01)
times.sort()
print(f"cat of a key every 10 ms for 12 s after it ({len(times)} cats): median {times[len(times) // 2]:.1f} ms, "
      f"p99 {times[int(0.99 * len(times))]:.1f} ms, worst {times[-1]:.1f} ms, {sum(t > 50 for t in times)} over 50 ms")
PY
    "$bin/kvfs" unmount "$d"; forget "$d"
}
if [ "${KVFS_BENCH_ONLY:-}" = folders ]; then  # section 6 alone: it needs kvfs alone
    bin=$(mount-scripts/build.sh | tail -1)
    many_folders
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
scale() {  # section 9: the scale test's long form
    echo "load average at start of the scale test: $(cut -d' ' -f1-3 /proc/loadavg)"
    KVFS_SCALE_MB=${KVFS_SCALE_MB:-200} swift test --filter 'KVStoreTests.ScaleTests' 2>&1 | grep -E '^scale:|Test run with'
}
sealed() {  # section 11: what sealing costs
    "$bin/kvfs-bench" sealed --writes "${KVFS_SEALED_WRITES:-20000}" --records "${KVFS_SEALED_RECORDS:-1000000}" \
        --rounds "${KVFS_SEALED_ROUNDS:-1}" --dir "$work"
    # Syncthing's propagation, the pair plain and sealed in turn in each configuration, in a network namespace
    # of its own whose only interface is its loopback: the two Syncthings reach each other on 127.0.0.1 and nothing else.
    local status=0
    if command -v syncthing >/dev/null && command -v ip >/dev/null; then
        netns=kvfs-bench-$$
        ip netns add "$netns" && ip -n "$netns" link set lo up
        ip netns exec "$netns" "$bin/kvfs-bench" mounts --integration on --load both --sealed both \
            --writes "${KVFS_SEALED_PROBES:-100}" --dir "$work" || status=$?
        ip netns del "$netns"; netns=""
        [ "$status" = 0 ] || return "$status"
    else
        echo "sealed: Syncthing's propagation not measured: syncthing or ip (iproute2) is not installed"
    fi
}
if [ "${KVFS_BENCH_ONLY:-}" = sealed ]; then  # section 11 alone
    build_release
    sealed
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
if [ "${KVFS_BENCH_ONLY:-}" = scale ]; then  # section 9 alone
    scale
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
# ---- 10: a write's cost as history grows ----
history_writes() {
    "$bin/kvfs-bench" history-writes --writes "${KVFS_BENCH_WRITES:-200000}" --dir "$work"
}

if [ "${KVFS_BENCH_ONLY:-}" = history-writes ]; then  # section 10 alone
    build_release
    history_writes
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
if [ "${KVFS_BENCH_ONLY:-}" = history ]; then  # section 7 alone: it needs kvfs alone
    mount-scripts/history-bench.sh "$(mount-scripts/build.sh | tail -1)"
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi

command -v cc >/dev/null || { echo "benchmark.sh: the yardsticks need a C compiler (cc): apt-get install gcc" >&2; exit 1; }
build_release
mkdir -p "$work/bin"
yardsticks=mount-scripts/yardsticks
cc -O2 -Wall "$yardsticks/fsops.c" -o "$work/bin/fsops"
cc -O2 -Wall "$yardsticks/memfs.c" $(pkg-config --cflags --libs fuse3) -o "$work/bin/memfs"
cc -O2 -Wall "$yardsticks/memfs_ll.c" $(pkg-config --cflags --libs fuse3) -o "$work/bin/memfs_ll"

# Waits (up to 10 s) until a FUSE mount answers at $1.
ready() { for _ in $(seq 1 200); do mountpoint -q "$1" && return 0; sleep 0.05; done; echo "no mount at $1" >&2; return 1; }

# ---- 1 and 2: fsops, ls -l and the shell loop, on each filesystem ----
# kvfs-sealed: the same store sealed (docs/sealed.md), sealed by `kvfs seal` before it is mounted: what sealing costs a mount.
fss=(tmpfs memfs memfs_ll kvfs kvfs-sealed)
mkdir -p "$work"/{tmpfs,memfs,memfs_ll,kvfs,kvfs-sealed,sync,state}
mount -t tmpfs -o size=64m tmpfs "$work/tmpfs" && mounts+=("$work/tmpfs")
"$work/bin/memfs" "$work/memfs" && mounts+=("$work/memfs")
"$work/bin/memfs_ll" "$work/memfs_ll" && mounts+=("$work/memfs_ll")
"$bin/kvfs" mount "$work/kvfs" --sync-dir "$work/sync" --state-dir "$work/state" && mounts+=("$work/kvfs")
"$bin/kvfs" seal --sync-dir "$work/sync-sealed" --state-dir "$work/state-sealed" > /dev/null
"$bin/kvfs" mount "$work/kvfs-sealed" --sync-dir "$work/sync-sealed" --state-dir "$work/state-sealed" && mounts+=("$work/kvfs-sealed")
pid=$(jq -r .pid "$work/kvfs/.kvfs/status")
# What the daemon spends besides the answers: its CPU time (utime + stime, in clock ticks), and the
# wake-ups of its sync watcher (the thread named kvfs-watcher), which its own appends must not cause one each.
daemon_cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
watcher_wakeups() {
    local t; for t in /proc/"$pid"/task/*; do
        [ "$(cat "$t/comm")" = kvfs-watcher ] && awk '/ctxt_switches/ {n += $2} END {print n}' "$t/status" && return
    done; echo 0
}
cpu_before=$(daemon_cpu) wakeups_before=$(watcher_wakeups)

# fsops: one round per filesystem in turn, $rounds times (interleaved), each run's medians kept.
for r in $(seq 1 "$rounds"); do
    for fs in "${fss[@]}"; do
        "$work/bin/fsops" "$work/$fs" "$keys" "$bytes" 1 | sed "s/^/$fs\t$r\t/" >> "$work/fsops.tsv"
    done
done

# ls -l of 1000 keys and a shell loop of 1000 keys, the same way (the listing warm: its second run is timed).
shell_loop='for i in $(seq 1 1000); do echo "value $i" > "$1/s$i"; echo "again $i" > "$1/s$i"; read -r line < "$1/s$i"; done'
for r in $(seq 1 "$rounds"); do
    for fs in "${fss[@]}"; do
        d="$work/$fs"
        python3 - "$d" "$fs" "$shell_loop" >> "$work/shell.tsv" <<'PY'
import os, subprocess, sys, time
d, fs, loop = sys.argv[1], sys.argv[2], sys.argv[3]
t = time.monotonic(); subprocess.run(["bash", "-c", loop, "bash", d], check=True); loop_ms = (time.monotonic() - t) * 1000
for i in range(1, 1001): os.unlink(f"{d}/s{i}")
for i in range(1000):
    with open(f"{d}/l{i:04}", "w") as f: f.write("x" * 64)
subprocess.run(["ls", "-l", d], stdout=subprocess.DEVNULL, check=True)
t = time.monotonic(); subprocess.run(["ls", "-l", d], stdout=subprocess.DEVNULL, check=True); ls_ms = (time.monotonic() - t) * 1000
for i in range(1000): os.unlink(f"{d}/l{i:04}")
print(f"{fs}\tls -l of 1000 keys (ms)\t{ls_ms:.1f}")
print(f"{fs}\tshell: 1000 x (create, overwrite, read) (ms)\t{loop_ms:.1f}")
PY
    done
done
rss_after_fsops=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
cpu_fsops=$(( $(daemon_cpu) - cpu_before )) wakeups_fsops=$(( $(watcher_wakeups) - wakeups_before ))
writes_fsops=$(( rounds * (3 * keys + 5000) ))  # fsops: create, overwrite, unlink; shell: s (create, overwrite, unlink), l (create, unlink)

echo
echo "fsops: $keys keys of $bytes bytes, $rounds interleaved rounds, median ns per operation; ls -l and shell loop in ms"
python3 - "$work/fsops.tsv" "$work/shell.tsv" <<'PY'
import re, sys, statistics, collections
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    fs, _, rest = line.rstrip("\n").split("\t", 2)
    m = re.match(r"(.*?)\s+\d+ ops\s+(\d+) ns/op", rest)
    rows.setdefault(m.group(1), collections.defaultdict(list))[fs].append(float(m.group(2)))
for line in open(sys.argv[2]):
    fs, op, value = line.rstrip("\n").split("\t")
    rows.setdefault(op, collections.defaultdict(list))[fs].append(float(value))
fss = ["tmpfs", "memfs", "memfs_ll", "kvfs", "kvfs-sealed"]
print(f"{'operation':46}" + "".join(f"{f:>12}" for f in fss) + f"{'kvfs/memfs':>12}{'kvfs/ll':>9}{'sealed/kvfs':>13}")
for op, v in rows.items():
    med = {f: statistics.median(v[f]) for f in fss}
    print(f"{op:46}" + "".join(f"{med[f]:>12.0f}" if med[f] >= 100 else f"{med[f]:>12.1f}" for f in fss)
          + f"{med['kvfs']/med['memfs']:>12.2f}{med['kvfs']/med['memfs_ll']:>9.2f}{med['kvfs-sealed']/med['kvfs']:>13.2f}")
PY
echo "kvfs daemon RSS after these runs: $((rss_after_fsops / 1024)) MiB"
echo "kvfs daemon during these runs: $writes_fsops writes, $(( cpu_fsops * 1000 / $(getconf CLK_TCK) )) ms of CPU, its sync watcher woke $wakeups_fsops times"

# ---- 3: FUSE requests per shell operation ----
for m in "$work/kvfs" "$work/kvfs-sealed"; do "$bin/kvfs" unmount "$m"; forget "$m"; done
fusermount3 -u "$work/memfs"; forget "$work/memfs"
mkdir -p "$work/kvfs-d" "$work/memfs-d"
"$bin/kvfs" mount "$work/kvfs-d" --sync-dir "$work/sync-d" --state-dir "$work/state-d" -d 2> "$work/kvfs.debug" &
ready "$work/kvfs-d" && mounts+=("$work/kvfs-d")
"$work/bin/memfs" -d "$work/memfs-d" 2> "$work/memfs.debug" &
ready "$work/memfs-d" && mounts+=("$work/memfs-d")
operations=(
    'echo x > new|echo x > $D/new'
    'echo y > existing|echo y > $D/e'
    'cat (warm)|cat $D/e'
    'stat|stat $D/e'
    'ls -l (20 keys, warm)|ls -l $D'
    'mv|mv $D/m1 $D/m2'
    'rm|rm $D/r'
    'sed -i|sed -i s/v/w/ $D/s'
)
for fs in kvfs memfs; do
    D="$work/$fs-d"
    for i in $(seq 1 17); do echo "v$i" > "$D/k$i"; done
    echo e > "$D/e"; echo m > "$D/m1"; echo r > "$D/r"; echo v > "$D/s"
    cat "$D/e" > /dev/null; ls -l "$D" > /dev/null; stat "$D/e" "$D/m1" "$D/r" "$D/s" > /dev/null
    for op in "${operations[@]}"; do
        sleep 0.3  # the kernel's asynchronous RELEASEs of what came before
        before=$(wc -l < "$work/$fs.debug")
        D="$D" bash -c "${op#*|}" > /dev/null 2>&1 || echo "${op%%|*}: failed on $fs (counted all the same)" >&2
        sleep 0.3
        tail -n +$((before + 1)) "$work/$fs.debug" | grep -o 'opcode: [A-Z_]*' | sed 's/opcode: //' \
            | sort | uniq -c | awk -v fs="$fs" -v op="${op%%|*}" '{n += $1; s = s $2 "x" $1 " "} END {printf "%s\t%s\t%d\t%s\n", op, fs, n, s}' >> "$work/requests.tsv"
    done
done
echo
echo "FUSE requests per shell operation (from -d; asynchronous RELEASE/FORGET included)"
python3 - "$work/requests.tsv" <<'PY'
import sys, collections
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    op, fs, n, detail = line.rstrip("\n").split("\t")
    rows.setdefault(op, {})[fs] = (int(n), detail.replace("x1 ", " ").strip())
print(f"{'operation':26}{'kvfs':>6}{'memfs':>7}  kvfs requests | memfs requests")
for op, v in rows.items():
    print(f"{op:26}{v['kvfs'][0]:>6}{v['memfs'][0]:>7}  {v['kvfs'][1]} | {v['memfs'][1]}")
PY
for m in "$work/kvfs-d" "$work/memfs-d"; do fusermount3 -u "$m"; forget "$m"; done
if [ "${KVFS_BENCH_ONLY:-}" = fsops ]; then
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
wait

# ---- 4: overwrite latency with the journal on ext4 on a loop device ----
truncate -s 1G "$work/ext4.img"
mkfs.ext4 -q -F "$work/ext4.img"
loopdev=$(losetup -f --show "$work/ext4.img")
mkdir -p "$work/ext4" "$work/kvfs-l"
mount "$loopdev" "$work/ext4"
"$bin/kvfs" mount "$work/kvfs-l" --sync-dir "$work/ext4/sync" --state-dir "$work/state-l" && mounts+=("$work/kvfs-l")
echo
python3 - "$work/kvfs-l" "$seconds" <<'PY'
import os, sys, time
d, seconds = sys.argv[1], float(sys.argv[2])
times, end, i = [], time.monotonic() + seconds, 0
while time.monotonic() < end:
    value = b"value %d\n" % i
    t = time.monotonic_ns()
    fd = os.open(f"{d}/k{i % 100}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, value)
    os.close(fd)
    times.append(time.monotonic_ns() - t)
    i += 1
times.sort()
p = lambda q: times[min(len(times) - 1, int(q * len(times)))] / 1000
print(f"overwrite latency, journal on ext4 on a loop device, {seconds:.0f} s loop, {len(times)} writes "
      f"(fsync each second, compactions): p50 {p(0.5):.0f} us, p99 {p(0.99):.0f} us, p99/p50 {p(0.99)/p(0.5):.2f}, max {times[-1]/1000:.0f} us")
PY
snapshots=$(ls "$work/ext4/sync/devices/"*/ 2>/dev/null | grep -c snapshot || true)
echo "(the device folder holds $snapshots snapshot(s) after the loop: compactions ran)"
"$bin/kvfs" unmount "$work/kvfs-l"; forget "$work/kvfs-l"
# kvfs unmount returns once the daemon's main thread has exited; on a loaded
# machine another of its threads may hold the journal on ext4 a moment longer.
for _ in $(seq 1 100); do umount "$work/ext4" 2>/dev/null && break; sleep 0.1; done
mountpoint -q "$work/ext4" && umount "$work/ext4"  # still busy after 10 s: say why, and stop
losetup -d "$loopdev"; loopdev=""

# ---- 5: mount time of a long history; RSS with a full store ----
"$bin/kvfs-bench" history --records "$history" --sync-dir "$work/history-sync" --state-dir "$work/history-state"
mkdir -p "$work/history"
start=$(date +%s%N)
"$bin/kvfs" mount "$work/history" --sync-dir "$work/history-sync" --state-dir "$work/history-state"
ready=$(date +%s%N)
mounts+=("$work/history")
ls "$work/history" > /dev/null
echo
echo "mount of a store with $history journal records of history: $(( (ready - start) / 1000000 )) ms (kvfs mount until ready)"
"$bin/kvfs" unmount "$work/history"; forget "$work/history"
mkdir -p "$work/full"
"$bin/kvfs" mount "$work/full" --sync-dir "$work/full-sync" --state-dir "$work/full-state" && mounts+=("$work/full")
python3 - "$work/full" <<'PY'
import sys
for i in range(1024):  # 1024 keys of 1024 bytes: both quotas full
    with open(f"{sys.argv[1]}/key{i:04}", "wb") as f: f.write(b"x" * 1023 + b"\n")
for i in range(1024): open(f"{sys.argv[1]}/key{i:04}", "rb").read()
PY
pid=$(jq -r .pid "$work/full/.kvfs/status")
echo "kvfs daemon RSS with a full store ($(jq -c '[.keys.used, .bytes.used]' "$work/full/.kvfs/status") keys, bytes): $(( $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024 )) MiB"
"$bin/kvfs" unmount "$work/full"; forget "$work/full"
many_folders

# ---- 7: the history bounds ----
echo
mount-scripts/history-bench.sh "$bin"

# ---- 8: kvfs set && kvfs wait, mount to mount ----
echo
"$bin/kvfs-bench" wait --writes 50 --load-interval 0.1 --dir "$work"

# ---- 9: the scale test's long form ----
echo
scale
echo
history_writes
echo
sealed
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
