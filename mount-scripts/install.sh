#!/usr/bin/env bash
# Installs kvfs the way other FUSE tools are installed: the kvfs binary, its
# man page kvfs(1) (generated from the command definitions), bash, zsh and
# fish completions, and the systemd units (kvfs@.service, system and user, and
# the user units kvfs-store@.service and kvfs-sync.service).
# As root into /usr/local, where fstab and `mount -t fuse.kvfs` find it;
# otherwise into ~/.local. mount-scripts/uninstall.sh removes it all again.
#
# Usage: mount-scripts/install.sh [--prefix DIR] [--bin-dir DIR]
#   --prefix DIR   install under DIR (default: /usr/local as root, else ~/.local)
#   --bin-dir DIR  take kvfs and generate-manual from this products folder
#                  instead of building them with mount-scripts/build.sh
#   DESTDIR=STAGE  write every file under STAGE, as packaging does
set -euo pipefail
cd "$(dirname "$0")/.."
source mount-scripts/install-layout.sh

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit "${1:-64}"; }
prefix=$(default_prefix) built=
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
        --bin-dir) built=${2:?--bin-dir needs a folder}; shift 2 ;;
        -h|--help) usage 0 ;;
        *) usage ;;
    esac
done
[ -n "$built" ] || built=$(mount-scripts/build.sh)
layout "$prefix"
dest=${DESTDIR:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

install -d "$dest$BIN" "$dest$MAN1" "$dest$BASH_COMPLETIONS" "$dest$ZSH_COMPLETIONS" "$dest$FISH_COMPLETIONS" "$dest$USER_UNITS"
install -m 755 "$built/kvfs" "$dest$BIN/kvfs"
"$built/generate-manual" "$built/kvfs" --output-directory "$work" >/dev/null
if [ "$prefix" = /usr ]; then
    gzip -9n "$work/kvfs.1"   # Debian's packages ship man pages compressed
    install -m 644 "$work/kvfs.1.gz" "$dest$MAN1/kvfs.1.gz"
else
    install -m 644 "$work/kvfs.1" "$dest$MAN1/kvfs.1"
fi
"$built/kvfs" --generate-completion-script bash >"$dest$BASH_COMPLETIONS/kvfs"
"$built/kvfs" --generate-completion-script zsh >"$dest$ZSH_COMPLETIONS/_kvfs"
"$built/kvfs" --generate-completion-script fish >"$dest$FISH_COMPLETIONS/kvfs.fish"
sed "s|@BINDIR@|$BIN|g" mount-scripts/systemd/user/kvfs@.service >"$dest$USER_UNITS/kvfs@.service"
sed "s|@BINDIR@|$BIN|g" mount-scripts/systemd/user/kvfs-store@.service >"$dest$USER_UNITS/kvfs-store@.service"
sed "s|@BINDIR@|$BIN|g" mount-scripts/systemd/user/kvfs-sync.service >"$dest$USER_UNITS/kvfs-sync.service"
if [ -n "$SYSTEM_UNITS" ]; then
    install -d "$dest$SYSTEM_UNITS"
    sed "s|@BINDIR@|$BIN|g" mount-scripts/systemd/system/kvfs@.service >"$dest$SYSTEM_UNITS/kvfs@.service"
fi
chmod 644 "$dest$BASH_COMPLETIONS/kvfs" "$dest$ZSH_COMPLETIONS/_kvfs" "$dest$FISH_COMPLETIONS/kvfs.fish" "$dest$USER_UNITS/kvfs@.service" "$dest$USER_UNITS/kvfs-store@.service" \
    "$dest$USER_UNITS/kvfs-sync.service"
[ -z "$dest" ] || exit 0

echo "kvfs: installed $("$BIN/kvfs" --version) as $BIN/kvfs, with kvfs(1), completions and systemd units" >&2
case ":$PATH:" in
    *":$BIN:"*) ;;
    *) echo "kvfs: note: $BIN is not on your PATH; add it (e.g. echo 'export PATH=\"$BIN:\$PATH\"' >> ~/.profile)" >&2 ;;
esac
if [ "$prefix" = "$HOME/.local" ]; then
    echo "kvfs: note: for zsh completions add 'fpath+=($ZSH_COMPLETIONS)' before compinit in ~/.zshrc;" \
         "fstab and mount -t fuse.kvfs need kvfs installed as root (they run it without your PATH)" >&2
fi
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload 2>/dev/null || true
fi
