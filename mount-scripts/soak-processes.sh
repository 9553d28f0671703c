#!/usr/bin/env bash
# The real system under real faults, for longer than CI runs (mount-scripts/soak.sh --processes runs it):
# three devices on this machine, each with its own sync root, state directory and mount, driven one step at a
# time by random writes, removals and imports, through the mount (the shell), the command line and a Swift
# program that uses the library (kvfs-store-probe); kill -9 of mount daemons and programs at random moments,
# in the middle of a write too; a synchronizer (below) that carries each device's folder to the others late,
# a few files at a time, in any order. The journals compact as they pass their floor (1 MiB: values up to 6 KB).
#
# At the end, with every device mounted and every folder carried everywhere, every device must show the same
# store, and each key must hold its last acknowledged write, or a write after it that a kill cut off before it
# was acknowledged (it may or may not have landed). A write is acknowledged when the tool says it succeeded:
# the shell's redirection closed without error, `kvfs set`/`rm`/`import` exited 0, the program printed the
# value it read back. The report gives steps, kills, acknowledged writes and acknowledged writes lost (0).
#
#   mount-scripts/soak-processes.sh [--minutes N] [--seed N] [--skip-build] [--keep]
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

minutes=30 seed=$RANDOM build=true keep=false
while (($#)); do
    case "$1" in
        --minutes) minutes="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --skip-build) build=false; shift ;;
        --keep) keep=true; shift ;;
        *) echo "usage: $0 [--minutes N] [--seed N] [--skip-build] [--keep]" >&2; exit 2 ;;
    esac
done
$build && swift build --build-tests >/dev/null
bin=$repo/.build/debug
[[ -x $bin/kvfs && -x $bin/kvfs-store-probe ]] || { echo "soak: build kvfs and kvfs-store-probe first" >&2; exit 2; }
RANDOM=$seed
store=com.example.soak
root=$(mktemp -d /tmp/kvfs-soak-processes.XXXXXX)
devices=(0 1 2)
steps=0 kills=0 acknowledged=0 lost=0 keys=(a b c d e f g h i j k l)

device_env() {  # the environment of device $1's processes
    local home=$root/d$1
    echo "HOME=$home XDG_DATA_HOME=$home/data XDG_STATE_HOME=$home/state XDG_RUNTIME_DIR=$home/run XDG_CONFIG_HOME=$home/config KVFS_STORE=$store"
}
on() {  # runs a command as device $1
    local device=$1; shift
    env $(device_env "$device") "$@"
}
folder_root() { echo "$root/d$1/data/kvfs/$store"; }
mount_point() { echo "$root/d$1/mnt"; }
daemon_pid() { sed -n 's/^pid \([0-9]*\) .*/\1/p' "$root/d$1"/state/kvfs/"$store"-*/mount.lock 2>/dev/null | head -1; }
own_folder() { cat "$root/d$1"/state/kvfs/"$store"-*/device-id 2>/dev/null; }

mount_device() {
    local mnt; mnt=$(mount_point "$1")
    mountpoint -q "$mnt" && return 0
    umount -l "$mnt" 2>/dev/null
    on "$1" "$bin/kvfs" mount --store "$store" "$mnt" >/dev/null 2>>"$root/mount-errors.log" || echo "soak: device $1 did not mount (see $root/mount-errors.log)"
}

cleanup() {
    for device in "${devices[@]}"; do
        on "$device" "$bin/kvfs" unmount "$(mount_point "$device")" >/dev/null 2>&1 || umount -l "$(mount_point "$device")" 2>/dev/null
    done
    $keep || rm -rf "$root"
}
trap cleanup EXIT

# The synchronizer: carries files of device $2's folder from its own root to device $3's, each as a whole
# (a temporary file renamed, as Syncthing does), at most $4 of them, in random order; and removes there what
# the owner removed. Only the owner's copy is ever the source, so no folder goes back to an older copy.
carry() {
    local owner=$1 to=$2 most=$3 id; id=$(own_folder "$owner")
    [[ -n $id ]] || return 0
    local from to_folder; from=$(folder_root "$owner")/devices/$id to_folder=$(folder_root "$to")/devices/$id
    [[ -d $from ]] || return 0
    mkdir -p "$to_folder"
    [[ -e $(folder_root "$to")/store-id ]] || cp "$(folder_root "$owner")/store-id" "$(folder_root "$to")/store-id.tmp" && mv -f "$(folder_root "$to")/store-id.tmp" "$(folder_root "$to")/store-id" 2>/dev/null
    local files; mapfile -t files < <(ls "$from" 2>/dev/null | shuf --random-source=<(yes $RANDOM))
    local carried=0 file
    for file in "${files[@]}"; do
        ((carried < most)) || break
        cmp -s "$from/$file" "$to_folder/$file" && continue
        cp "$from/$file" "$to_folder/.$file.soak-tmp" 2>/dev/null && mv -f "$to_folder/.$file.soak-tmp" "$to_folder/$file"
        carried=$((carried + 1))
    done
    for file in $(ls "$to_folder" 2>/dev/null); do
        [[ -e $from/$file ]] || rm -f "$to_folder/$file"
    done
}
carry_some() {
    local owner=$((RANDOM % 3)) to=$((RANDOM % 3))
    ((owner != to)) && carry "$owner" "$to" $((1 + RANDOM % 3))
}
carry_all() {
    for owner in "${devices[@]}"; do for to in "${devices[@]}"; do ((owner != to)) && carry "$owner" "$to" 1000; done; done
}

# What each write did to which key, in order: "<step> <key> <ack|cut> <value or -removed->".
writes=$root/writes
: >"$writes"
note() { echo "$steps $1 $2 $3" >>"$writes"; [[ $2 == ack ]] && acknowledged=$((acknowledged + 1)); }

value_for() { printf '%s:%s' "$steps" "$(head -c $((RANDOM % 6000)) /dev/zero | tr '\0' x)"; }

# Whether $2 is device $1's mount daemon: a pid a lock file names may be gone and taken by another process.
is_daemon() { [[ -r /proc/$2/cmdline && $(tr '\0' ' ' <"/proc/$2/cmdline") == *"kvfs mount"*"$(mount_point "$1")"* ]]; }

# A kill -9 of device $1's daemon $2 ms from now (in the background: it may land in the middle of the next step).
kill_daemon_soon() {
    local device=$1 pid; pid=$(daemon_pid "$1")
    [[ -n $pid ]] && is_daemon "$device" "$pid" || return 0
    kills=$((kills + 1))
    (sleep "0.0$2"; is_daemon "$device" "$pid" && kill -9 "$pid" 2>/dev/null) &
}

step() {
    local device=$((RANDOM % 3)) key=${keys[RANDOM % ${#keys[@]}]} mnt value status
    mnt=$(mount_point "$device")
    steps=$((steps + 1))
    case $((RANDOM % 100)) in
    [0-9] | 1[0-9] | 2[0-4])  # through the mount, as the shell writes a file
        value=$(value_for)
        ((RANDOM % 8 == 0)) && kill_daemon_soon "$device" $((RANDOM % 10))
        if { printf '%s' "$value" >"$mnt/$key"; } 2>/dev/null; then note "$key" ack "$value"; else note "$key" cut "$value"; fi
        ;;
    2[5-9] | 3[0-9])  # the command line (through the mount when it runs, else on its own)
        value=$(value_for)
        if printf '%s' "$value" | on "$device" "$bin/kvfs" set --store "$store" "$key" - >/dev/null 2>&1; then note "$key" ack "$value"; else note "$key" cut "$value"; fi
        ;;
    4[0-9])  # a Swift program, which a kill -9 may cut off in the middle
        value=$(value_for)
        local out=$root/probe.out
        on "$device" "$bin/kvfs-store-probe" set "$key" "$value" get "$key" >"$out" 2>/dev/null &
        local probe=$!
        if ((RANDOM % 4 == 0)); then
            sleep "0.$((RANDOM % 3))$((RANDOM % 10))"
            kill -9 "$probe" 2>/dev/null && kills=$((kills + 1))
        fi
        wait "$probe" 2>/dev/null
        if grep -qxF -- "$value" "$out"; then note "$key" ack "$value"; else note "$key" cut "$value"; fi
        ;;
    5[0-9] | 6[0-4])  # a removal, through the mount or the command line; of a key this device does not show, none
        local said
        if ((RANDOM % 2)); then
            said=$(rm "$mnt/$key" 2>&1); status=$?
        else
            said=$(on "$device" "$bin/kvfs" rm --store "$store" "$key" 2>&1); status=$?
        fi
        if ((status == 0)); then
            note "$key" ack -removed-
        elif ! grep -qi "no such" <<<"$said"; then
            note "$key" cut -removed-
        fi
        ;;
    6[5-9] | 7[0-4])  # an import: several keys in one record
        local second=${keys[RANDOM % ${#keys[@]}]} document=$root/import.plist first_value second_value
        [[ $second == "$key" ]] && second=${keys[(RANDOM % ${#keys[@]})]}
        [[ $second == "$key" ]] && return 0
        first_value=$(value_for)x second_value=$(value_for)y
        printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>%s</key><string>%s</string><key>%s</key><string>%s</string></dict></plist>\n' \
            "$key" "$first_value" "$second" "$second_value" >"$document"
        if on "$device" "$bin/kvfs" import --store "$store" "$document" >/dev/null 2>&1; then
            note "$key" ack "$first_value"; note "$second" ack "$second_value"
        else
            note "$key" cut "$first_value"; note "$second" cut "$second_value"
        fi
        ;;
    7[5-9] | 8[0-9] | 9[0-2]) carry_some ;;  # the synchronizer, late and a few files at a time
    9[3-5])  # a daemon killed while idle
        kill_daemon_soon "$device" 0; wait
        ;;
    *) mount_device "$device" ;;  # a daemon that died comes back (as systemd would restart it)
    esac
}

echo "soak: seed $seed, $minutes minutes, in $root"
for device in "${devices[@]}"; do mkdir -p "$(mount_point "$device")"; done
mount_device 0
for device in 1 2; do
    mkdir -p "$(folder_root "$device")" && cp "$(folder_root 0)/store-id" "$(folder_root "$device")/store-id"
    mount_device "$device"
done
deadline=$(($(date +%s) + minutes * 60))
while (($(date +%s) < deadline)); do
    step
    ((steps % 500 == 0)) && echo "soak: $steps steps, $kills kills, $acknowledged acknowledged writes"
done
wait

# The end: every daemon up, every folder everywhere, every device read it.
for device in "${devices[@]}"; do mount_device "$device"; done
for _ in 1 2 3; do carry_all; sleep 3; done

declare -A shown
problems=0
for device in "${devices[@]}"; do
    listing=""
    for key in "${keys[@]}"; do
        value=$(on "$device" "$bin/kvfs" get --store "$store" "$key" 2>/dev/null) || value=-removed-
        listing+="$key=$(printf '%s' "$value" | sha1sum | cut -c1-12) "
        shown[$device/$key]=$value
    done
    [[ $device == 0 ]] && first=$listing
    if [[ $listing != "$first" ]]; then
        echo "soak: device $device differs from device 0: $listing vs $first"; problems=$((problems + 1))
    fi
done
for key in "${keys[@]}"; do
    # The allowed ends: the last acknowledged write, and every write cut off after it.
    allowed=$(awk -v key="$key" '$2 == key { if ($3 == "ack") { n = 0 } ; list[n++] = $4 } END { for (i = 0; i < n; i++) print list[i] }' "$writes")
    acked=$(awk -v key="$key" '$2 == key && $3 == "ack" { last = $4 } END { print last }' "$writes")
    [[ -z $allowed ]] && allowed=-removed-
    [[ -z $acked ]] && allowed+=$'\n'-removed-
    if ! grep -qxF -- "${shown[0/$key]}" <<<"$allowed"; then
        lost=$((lost + 1))
        echo "soak: key $key shows ${shown[0/$key]:0:20}…, not its last acknowledged write ${acked:0:20}… or a write cut off after it"
    fi
done
echo "soak: $steps steps, $kills kills, $acknowledged acknowledged writes, $lost lost; devices $([[ $problems == 0 ]] && echo identical || echo DIFFER)"
((lost == 0 && problems == 0))
