#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, real FUSE
# mounts, sync through a shared folder, Syncthing and Unison on 127.0.0.1,
# installing), then the Debian package's (mount-scripts/test-package.sh), and
# the libraries' DocC documentation (mount-scripts/check-docs.sh).
# Usage: mount-scripts/run-tests.sh [swift test options, e.g. --filter MountTests]
#   (with options, only `swift test` runs: the package test needs a release build)
set -euo pipefail
cd "$(dirname "$0")/.."

mount-scripts/install-deps.sh
swift build --build-tests
swift build --product generate-manual   # install.sh's man page, which the install tests check
swift test --skip-build "$@"
# The library's suites of history, conflicts, delivery, retire, snapshots and tombstones, and every mount test, once
# more with every store sealed (docs/architecture.md § Tests; the mount and transport tests that matter take plain and
# sealed as arguments). Two runs: the library's sealing for tests and the mount tests' are each their process's own.
[ $# -gt 0 ] || KVFS_TEST_SEALED=1 swift test --skip-build \
    --filter 'KVStoreTests\.(HistoryTests|ConflictTests|DeliveryTests|OwnSnapshotTests|TombstoneCollectionTests|RetireTests)'
[ $# -gt 0 ] || KVFS_TEST_SEALED=1 swift test --skip-build --filter MountTests
[ $# -gt 0 ] || mount-scripts/test-package.sh
[ $# -gt 0 ] || mount-scripts/fuzz.sh --check
# Each library with a DocC catalog (Sources/TARGET/TARGET.docc): built offline without a warning, every public symbol documented.
docc_targets=(KVStore ObservableDefaults KVBucket)
[ $# -gt 0 ] || mount-scripts/check-docs.sh "${docc_targets[@]}"
