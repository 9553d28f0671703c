#!/usr/bin/env bash
# syncthing-pair.sh — keep two kvfs sync directories identical with Syncthing,
# on 127.0.0.1 only (no discovery, relays, NAT, usage reports or upgrades).
#
# Two kvfs devices on one machine (or a test) each get their own sync folder,
# as two machines would, and a Syncthing instance per folder copies the other
# device's files over. Each setting that matters is explained where it is made.
#
#   syncthing-pair.sh [--ports GUI1,GUI2,LISTEN1,LISTEN2] WORK_DIR SYNC_DIR_1 SYNC_DIR_2
#       configure, start both instances in the background, link them, and print
#       how to mount kvfs on each folder
#   syncthing-pair.sh --configure-only [--ports ...] WORK_DIR SYNC_DIR_1 SYNC_DIR_2
#       only write WORK_DIR/st1, WORK_DIR/st2 and WORK_DIR/pair.env; the caller
#       starts `syncthing serve --home=WORK_DIR/stN` itself (st1 first), then
#       runs --link
#   syncthing-pair.sh --link WORK_DIR
#       add each instance to the other and the folder to both (over REST), and
#       wait until they are connected
#   syncthing-pair.sh --stop WORK_DIR
#       stop the instances this script started
#   syncthing-pair.sh --configure-home HOME GUI_ADDRESS LISTEN_URL
#       only generate one instance's home (e.g. on each of several machines:
#       127.0.0.1:8384 tcp://192.0.2.7:22000) and print its ID= and APIKEY=
#
# Fast sync: mount each device with --syncthing, so kvfs asks its Syncthing to
# scan the device's folder after every commit instead of waiting for the
# watcher (1 s here, 10 s by default): the API key is read from config.xml,
#   kvfs mount ~/kv1 --sync-dir SYNC_DIR_1 --syncthing http://$ST1_GUI \
#        --syncthing-config WORK_DIR/st1/config.xml
#
# Needs: syncthing (1.19 or later), curl.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit "${1:-2}"; }

FOLDER_ID=kvfs
# Syncthing's own settings, checked by the instances; only these change from what `generate` writes.
OPTIONS=(globalAnnounceEnabled=false localAnnounceEnabled=false relaysEnabled=false natEnabled=false
         urAccepted=-1 urSeen=3 autoUpgradeIntervalH=0 crashReportingEnabled=false startBrowser=false
         announceLANAddresses=false reconnectionIntervalS=1)

die() { echo "syncthing-pair.sh: $*" >&2; exit 1; }

# configure_home HOME GUI_ADDRESS LISTEN_URL: generate HOME, its GUI and listener where given,
# nothing else on the network (no discovery, relays, NAT, reports or upgrades).
configure_home() {
    local home=$1 gui=$2 listen=$3
    rm -rf "$home"
    syncthing generate --home="$home" --no-default-folder >/dev/null 2>&1
    local config="$home/config.xml" key
    # One element per line in a generated config.xml: sed is enough, and nothing has started yet.
    sed -i -e "s|<address>127.0.0.1:[0-9]*</address>|<address>$gui</address>|" \
           -e "s|<listenAddress>default</listenAddress>|<listenAddress>$listen</listenAddress>|" \
           "$config"
    local option
    for option in "${OPTIONS[@]}"; do
        sed -i "s|<${option%%=*}>[^<]*</${option%%=*}>|<${option%%=*}>${option#*=}</${option%%=*}>|" "$config"
    done
    key=$(sed -n 's|.*<apikey>\(.*\)</apikey>.*|\1|p' "$config")
    echo "ID=$(syncthing serve --home="$home" --device-id)"
    echo "APIKEY=$key"
}

# configure N GUI_PORT LISTEN_PORT: generate WORK/stN on loopback, and note it in pair.env.
configure() {
    local n=$1 home="$WORK/st$1"
    {
        echo "ST${n}_HOME=$home"
        echo "ST${n}_GUI=127.0.0.1:$2"
        echo "ST${n}_LISTEN=tcp://127.0.0.1:$3"
        configure_home "$home" "127.0.0.1:$2" "tcp://127.0.0.1:$3" | sed "s/^/ST${n}_/"
    } >>"$WORK/pair.env"
}

# api N METHOD PATH [BODY]: one REST call to instance N.
api() {
    local gui="ST$1_GUI" key="ST$1_APIKEY"
    curl -sf -X "$2" -H "X-API-Key: ${!key}" "http://${!gui}$3" ${4:+-d "$4"}
}

# link: each instance learns the other (only st2 dials: st1 has it as dynamic), then the folder.
link() {
    # shellcheck disable=SC1091
    source "$WORK/pair.env"
    local n other address path
    for n in 1 2; do
        until api "$n" GET /rest/system/ping >/dev/null 2>&1; do sleep 0.05; done
    done
    for n in 1 2; do
        other=$((3 - n))
        local id="ST${other}_ID" listen="ST${other}_LISTEN" mine="ST${n}_ID"
        address=$([ "$n" = 1 ] && echo dynamic || echo "${!listen}")
        api "$n" PUT "/rest/config/devices/${!id}" \
            "{\"deviceID\":\"${!id}\",\"name\":\"st$other\",\"addresses\":[\"$address\"]}" >/dev/null
        path=$(sed -n "s|^SYNC$n=||p" "$WORK/pair.env")
        api "$n" PUT "/rest/config/folders/$FOLDER_ID" \
            "{\"id\":\"$FOLDER_ID\",\"label\":\"kvfs\",\"path\":\"$path\",\"type\":\"sendreceive\",\"rescanIntervalS\":10,\"fsWatcherEnabled\":true,\"fsWatcherDelayS\":1,\"devices\":[{\"deviceID\":\"${!mine}\"},{\"deviceID\":\"${!id}\"}]}" >/dev/null
    done
    local waited=0
    until api 2 GET /rest/system/connections | grep -q '"connected": *true'; do
        sleep 0.1
        waited=$((waited + 1))
        [ "$waited" -lt 600 ] || die "the instances did not connect within 60 s (see $WORK/st*.log)"
    done
}

start() {
    export STNOUPGRADE=1 STMONITORED=yes STHASHING=minio
    local n
    for n in 1 2; do  # the listening side (st1) first, or st2's first dial fails and the next comes 5 s later
        syncthing serve --home="$WORK/st$n" --no-browser --no-restart --no-upgrade >"$WORK/st$n.log" 2>&1 &
        echo $! >"$WORK/st$n.pid"
        # shellcheck disable=SC1091
        source "$WORK/pair.env"
        until api "$n" GET /rest/system/ping >/dev/null 2>&1; do sleep 0.05; done
    done
}

stop() {
    local n pid
    for n in 1 2; do
        [ -f "$WORK/st$n.pid" ] || continue
        pid=$(cat "$WORK/st$n.pid")
        kill "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
        rm -f "$WORK/st$n.pid"
    done
}

MODE=all PORTS=18384,18385,22001,22002
while [ $# -gt 0 ]; do
    case $1 in
        --configure-only) MODE=configure; shift ;;
        --link) MODE=link; shift ;;
        --stop) MODE=stop; shift ;;
        --configure-home) MODE=home; shift ;;
        --ports) PORTS=${2:?--ports needs GUI1,GUI2,LISTEN1,LISTEN2}; shift 2 ;;
        -h|--help) usage 0 ;;
        -*) usage ;;
        *) break ;;
    esac
done
command -v syncthing >/dev/null || die "syncthing is not installed (apt-get install syncthing)"
command -v curl >/dev/null || die "curl is not installed (apt-get install curl)"

case $MODE in
    home)
        [ $# -eq 3 ] || usage
        configure_home "$@"
        exit 0 ;;
    link|stop)
        [ $# -eq 1 ] || usage
        WORK=$(realpath "$1")
        "$MODE"
        exit 0 ;;
esac
[ $# -eq 3 ] || usage
IFS=, read -r GUI1 GUI2 LISTEN1 LISTEN2 <<<"$PORTS"
mkdir -p "$1" "$2" "$3"
WORK=$(realpath "$1")
: >"$WORK/pair.env"
echo "SYNC1=$(realpath "$2")" >>"$WORK/pair.env"
echo "SYNC2=$(realpath "$3")" >>"$WORK/pair.env"
configure 1 "$GUI1" "$LISTEN1"
configure 2 "$GUI2" "$LISTEN2"
[ "$MODE" = configure ] && exit 0

start
link
cat <<EOF
Syncthing keeps $(realpath "$2") and $(realpath "$3") identical (logs: $WORK/st1.log, $WORK/st2.log).
Mount the first device now, and the second once store-id has arrived in the second folder
(--syncthing: each commit is scanned at once, so a write shows on the other mount in milliseconds):
  kvfs mount ~/kv1 --sync-dir $(realpath "$2") --state-dir $WORK/state-dev1 --device-name dev1 \\
       --syncthing http://127.0.0.1:$GUI1 --syncthing-config $WORK/st1/config.xml
  until [ -e $(realpath "$3")/store-id ]; do sleep 0.2; done
  kvfs mount ~/kv2 --sync-dir $(realpath "$3") --state-dir $WORK/state-dev2 --device-name dev2 \\
       --syncthing http://127.0.0.1:$GUI2 --syncthing-config $WORK/st2/config.xml
Stop Syncthing with: $0 --stop $WORK
EOF
