#!/usr/bin/env bash
# Builds kvfs for installing: release, the Swift runtime linked in
# (--static-swift-stdlib: the binary needs only libfuse3 and the C
# libraries), the commit baked in (`kvfs --version`), and swift-argument-
# parser's generate-manual beside it for the man page. Prints the products folder.
#
# The commit goes in through Sources/KVFSBuildInfo/commit.h, which git
# ignores and which lives only for this build, so the tree stays clean and a
# plain `swift build` says "unknown commit".
# Usage: mount-scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."

header=Sources/KVFSBuildInfo/commit.h
commit=$(git describe --always --dirty 2>/dev/null || echo "unknown commit")
# Touching the C file makes the build compile it again whether the header appeared or went.
trap 'rm -f "$header"; touch Sources/KVFSBuildInfo/BuildInfo.c' EXIT
printf '#define KVFS_COMMIT "%s"\n' "$commit" >"$header"
touch Sources/KVFSBuildInfo/BuildInfo.c
flags=(-c release --static-swift-stdlib)
swift build "${flags[@]}" --product kvfs >&2
swift build "${flags[@]}" --product generate-manual >&2
swift build "${flags[@]}" --show-bin-path
