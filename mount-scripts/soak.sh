#!/usr/bin/env bash
# Soaks kvfs with seeded schedules for longer than CI runs them, and prints
# each failing seed with the command that replays it (docs/architecture.md § Tests).
#
#   mount-scripts/soak.sh [--minutes N] [--seeds N] [--skip-build]
#       The simulation: SimulatedCluster's convergence schedules and the history
#       schedules, background work (compactions, ticks, prompt publications)
#       run when the seed says, batch after batch of new seeds, until N minutes
#       have passed (default 10) or N seeds have run.
#   mount-scripts/soak.sh --processes [--minutes N] [--skip-build]
#       The real system under real faults (mount-scripts/soak-processes.sh):
#       three devices as mounts and library programs, kill -9 at random moments,
#       a synchronizer that delivers late and out of order.
#
# Exit status 1 when a schedule failed.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=10 seeds="" processes=false build=true
while (($#)); do
    case "$1" in
        --minutes) minutes="$2"; shift 2 ;;
        --seeds) seeds="$2"; shift 2 ;;
        --processes) processes=true; shift ;;
        --skip-build) build=false; shift ;;
        *) echo "usage: $0 [--minutes N] [--seeds N] [--processes] [--skip-build]" >&2; exit 2 ;;
    esac
done

if $processes; then
    exec mount-scripts/soak-processes.sh --minutes "$minutes" $($build || echo --skip-build)
fi

$build && swift build --build-tests >/dev/null
batch=200           # schedules a batch of each suite
start=$(date +%s) deadline=$(($(date +%s) + minutes * 60))
base=$(( ($(date +%s%N) & 0xFFFFFFFFFFF) << 16 ))  # seeds CI never runs, new each soak
run=0 failed=0
log=$(mktemp -d /tmp/kvfs-soak.XXXXXX)
echo "soak: seeds from $base; logs in $log"
while :; do
    (( $(date +%s) < deadline )) || [[ -n $seeds ]] || break
    [[ -z $seeds ]] || (( run < seeds )) || break
    out="$log/batch-$base.log"
    status=0
    # ConvergenceTests' 20 batches split `batch` seeds (and a fifth more with clocks days apart); the history suite runs as many.
    KVFS_SEED_BASE=$base KVFS_SCHEDULES=$batch KVFS_HISTORY_SCHEDULES=$batch \
        swift test --skip-build --filter 'KVStoreTests.(ConvergenceTests/schedules|HistoryPropertyTests)' >"$out" 2>&1 || status=$?
    run=$((run + batch + batch / 5 + batch))
    if ((status != 0)); then
        mapfile -t replays < <(grep -o 'seed [0-9]* (replay with [^)]*)' "$out" | sort -u)
        if ((${#replays[@]} == 0)); then
            echo "soak: a batch failed without naming a seed (status $status): $out"
            failed=$((failed + 1))
        fi
        for line in "${replays[@]}"; do
            failed=$((failed + 1))
            variables=${line#*replay with }
            variables=${variables%)}
            echo "soak: FAILED ${line%% (*}: replay with $variables swift test --skip-build --filter 'KVStoreTests.(ConvergenceTests|HistoryPropertyTests)/schedules'  ($out)"
        done
    else
        rm -f "$out"
    fi
    base=$((base + 0x10000))
    elapsed=$(( $(date +%s) - start ))
    echo "soak: $run schedules in ${elapsed} s ($(awk -v r=$run -v e=$elapsed 'BEGIN { printf "%.1f", (e > 0 ? r / e : 0) }') a second), $failed failed"
done
((failed == 0))
