#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, real FUSE
# mounts, sync through a shared folder, Syncthing and Unison on 127.0.0.1).
# Usage: mount-scripts/run-tests.sh [swift test options, e.g. --filter MountTests]
set -euo pipefail
cd "$(dirname "$0")/.."

mount-scripts/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
