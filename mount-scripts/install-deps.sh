#!/usr/bin/env bash
# Installs, from Debian's packages, what kvfs needs to build, mount and be
# tested, when it is missing: libfuse3 (headers and fusermount3), attr
# (getfattr/setfattr), man-db (man kvfs), systemd (systemd-analyze checks the
# units), and the tools the tests drive (Syncthing, Unison, vim, jq,
# curl, ip for the machines in network namespaces, bindfs to stand in for NFS,
# libplist's plistutil to read the XML file form as another tool does,
# libfaketime's faketime to write under a wrong clock).
# Swift itself (6.x, with its package manager) must already be on PATH.
# Usage: mount-scripts/install-deps.sh
set -euo pipefail

packages=(libfuse3-dev libssl-dev fuse3 pkg-config attr man-db systemd syncthing unison inotify-tools vim jq python3 curl iproute2 bindfs libplist-utils faketime)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "kvfs: installing ${missing[*]}" >&2
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "kvfs: swift is not on PATH; install Swift 6 from swift.org first" >&2; exit 1; }
[[ -e /dev/fuse ]] || echo "kvfs: warning: /dev/fuse is missing; mounts (and their tests) cannot run here" >&2
