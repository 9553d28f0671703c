#!/usr/bin/env bash
# Builds each library target's DocC documentation offline (the swift-docc-plugin
# Package.swift names), with docc's warnings as errors (a broken symbol link, a
# topic that names nothing), and fails when a public symbol has no doc comment
# of its own, which docc does not warn of: every symbol of the target's symbol
# graph but those the compiler synthesizes or declares implicitly (Equatable's
# !=, a raw-value enum's init(rawValue:), Decodable's init(from:): no source
# line) and extension blocks needs one written in the target (a `description` that only inherits
# the standard library's words does not count).
# Usage: mount-scripts/check-docs.sh TARGET...   (run-tests.sh runs it for each
#   library with a catalog, Sources/TARGET/TARGET.docc)
# The archives are in .build/plugins/Swift-DocC/outputs/TARGET.doccarchive.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
for target in "$@"; do
    log=$(mktemp)
    if ! swift package generate-documentation --target "$target" --warnings-as-errors --verbose >"$log" 2>&1; then
        grep -E 'warning:|error:' "$log" || cat "$log"
        echo "check-docs: $target's documentation does not build without warnings" >&2
        status=1; rm -f "$log"; continue
    fi
    graphs=$(sed -n "s/^target symbol graph directory path: '\(.*\)'$/\1/p" "$log" | tail -1)
    rm -f "$log"
    [ -d "$graphs" ] || { echo "check-docs: no symbol graphs for $target" >&2; status=1; continue; }
    undocumented=$(jq -r --arg target "$target" '
        .symbols[]
        | select(.accessLevel == "public" or .accessLevel == "open")
        | select(.docComment == null or (.docComment.module // $target) != $target)
        | select(.identifier.precise | contains("::SYNTHESIZED::") | not)
        | select(.location != null)
        | select(.kind.identifier != "swift.extension")
        | "\(.pathComponents | join(".")) (\(.kind.displayName))"' "$graphs"/*.symbols.json | sort -u)
    if [ -n "$undocumented" ]; then
        echo "$undocumented"
        echo "check-docs: these public symbols of $target have no doc comment" >&2
        status=1
    else
        echo "check-docs: $target: documentation built without warnings, every public symbol documented"
    fi
done
exit $status
