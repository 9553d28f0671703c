#!/usr/bin/env bash
# Installs, from Debian's packages, what kvfs needs to build, mount and be
# tested, when it is missing: libfuse3 (headers and fusermount3), libcurl's headers (URLSession, the bucket
# client's HTTP, links it), attr
# (getfattr/setfattr), man-db (man kvfs), systemd (systemd-analyze checks the
# units), and the tools the tests drive (Syncthing, Unison, vim, jq,
# curl, ip for the machines in network namespaces, bindfs to stand in for NFS,
# libplist's plistutil to read the XML file form as another tool does,
# libfaketime's faketime to write under a wrong clock), and moto's S3 emulator for the bucket tests (PyPI
# moto[server], in a venv of its own: Debian's pip installs nothing system-wide).
# Swift itself (6.x, with its package manager) must already be on PATH.
# Usage: mount-scripts/install-deps.sh
set -euo pipefail

packages=(libfuse3-dev libssl-dev libcurl4-openssl-dev fuse3 pkg-config attr man-db systemd syncthing unison inotify-tools vim jq python3 curl iproute2 bindfs libplist-utils faketime python3-venv)
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
# The bucket tests' S3 emulator (Tests/TestSupport/MotoServer.swift finds it here, or on PATH). moto honours
# If-None-Match and If-Match on PutObject, which kvfs relies on (docs/buckets.md).
moto_venv="${XDG_CACHE_HOME:-$HOME/.cache}/kvfs/moto"
if ! command -v moto_server >/dev/null && [[ ! -x $moto_venv/bin/moto_server ]]; then
    echo "kvfs: installing moto[server] in $moto_venv" >&2
    python3 -m venv "$moto_venv"
    "$moto_venv/bin/pip" install -q 'moto[server]>=5.1'
fi
