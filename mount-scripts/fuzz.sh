#!/usr/bin/env bash
# Builds and runs kvfs's libFuzzer targets: binary-plist, xml-plist,
# journal-frame, record, sealed-frame, roster, pairing and signed-file (Tests/Fuzz/<target>.swift, compiled with the
# KVStore sources they drive into one binary with `swiftc -sanitize=fuzzer,address`).
#
# Usage:
#   mount-scripts/fuzz.sh [TARGET|all] [RUNS]   fuzz RUNS inputs (default 1000000) per target,
#                                              then merge what it found into the minimised
#                                              corpus Tests/Fuzz/corpus/TARGET
#   mount-scripts/fuzz.sh --check [SECONDS]     the test suite's short run: each target for
#                                              SECONDS (default 5) from its corpus; the corpus is not changed
#   mount-scripts/fuzz.sh --measure             the worst time and memory: each target, built without
#                                              sanitizers (-O), over its corpus, the samples, the crashers
#                                              and generated worst cases at the decoding limits
# A crash, a timeout (30 s per input, under AddressSanitizer on a shared machine) or more than 2 GB of memory (mostly
# AddressSanitizer's) fails the run; the input is kept in Tests/Fuzz/crashers/.
# Runs under `nice -n 10`. Prints one line per target: inputs run, and the outcome.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fuzz=$root/Tests/Fuzz
build=$root/.build/fuzz
binary=$build/kvfs-fuzz
all_targets=(binary-plist xml-plist journal-frame record sealed-frame roster pairing signed-file)

# The KVStore sources the targets need (values, records and their framing),
# compiled with the targets into one module: the rest of KVStore (the engine,
# the library) needs packages SwiftPM resolves, and nothing the fuzzers drive.
k=$root/Sources/KVStore
kvstore_sources="$(ls "$k"/Values/*.swift "$k"/Quota/*.swift "$k"/Keys/StoreKey.swift "$k"/Keys/StringKeyedDictionary.swift) $k/Engine/Merge/HybridLogicalClock.swift $k/Engine/Identity/DeviceID.swift
    $(for f in ByteCoding CRC32C JournalRecord RecordCodec RecordKind RecordValueCoding RecordFrame WriteBase; do echo "$k/Journal/$f.swift"; done)
    $k/Sealing/SealingKeys.swift $(for f in RecordChain SealedRecord SealedFileOpener RecordCipher NonceMAC SHA256State; do echo "$k/Sealing/Records/$f.swift"; done)
    $k/Sealing/Membership/RosterVersion.swift $k/Sealing/Membership/PairingMessage.swift $k/Sealing/SignedFiles/SignedFile.swift"

# The system's libcrypto (the sealed records' ChaCha20-Poly1305: RecordCipher) by its module map and -lcrypto; and
# swift-crypto (SHA-256, the keys, Ed25519) as `swift build --build-tests` built it:
# its modules (linked into a folder of their own: KVStore's module beside them would be imported instead of the
# sources), the C headers they import, and its objects, linked in without the sanitizers (kvfs's code is what is fuzzed).
debug=$root/.build/debug
checkouts=$root/.build/checkouts
[ -d "$debug/Modules/Crypto.swiftmodule" ] || [ -f "$debug/Modules/Crypto.swiftmodule" ] \
    || { echo "fuzz.sh: build the package first (swift build --build-tests): the sealed-frame target needs swift-crypto" >&2; exit 2; }
mkdir -p "$build/modules"
for m in Crypto CryptoBoringWrapper SystemPackage; do ln -sfn "$debug/Modules/$m.swiftmodule" "$build/modules/"; done
crypto_flags="-I $build/modules -lstdc++ -I $root/Sources/CLibCrypto -lcrypto
    -Xcc -I$checkouts/swift-crypto/Sources/CCryptoBoringSSL/include -Xcc -I$checkouts/swift-crypto/Sources/CCryptoBoringSSLShims/include
    -Xcc -I$checkouts/swift-system/Sources/CSystem/include
    $(for t in Crypto CryptoBoringWrapper CCryptoBoringSSL CCryptoBoringSSLShims CXKCP CXKCPShims SystemPackage CSystem; do
        find "$debug/$t.build" -name '*.o'; done | tr '\n' ' ')"

mode=fuzz
if [ "${1:-}" = "--check" ]; then mode=check; shift; fi
if [ "${1:-}" = "--measure" ]; then
    measure=$root/.build/fuzz/kvfs-measure
    mkdir -p "$(dirname "$measure")"
    # shellcheck disable=SC2086
    swiftc -O -wmo -suppress-warnings -module-name KVStoreFuzz -o "$measure" $crypto_flags $kvstore_sources "$fuzz"/*.swift "$fuzz/Measure/main.swift"
    cases=$(mktemp -d /tmp/kvfs-fuzz-worst-XXXXXX)
    python3 "$fuzz/Measure/worst-cases.py" "$cases"
    for t in "${all_targets[@]}"; do
        samples=()
        case $t in binary-plist) samples=("$fuzz/samples/plist");; journal-frame) samples=("$fuzz/samples/journal");; esac
        /usr/bin/time -f "  (/usr/bin/time: %e s, max RSS %M KiB)" \
            "$measure" "$t" "$fuzz/corpus/$t" "${samples[@]}" "$fuzz/crashers" "$cases/$t"
        "$measure" "$t" "$cases/$t"
    done
    rm -rf "$cases"
    exit 0
fi
if [ "$mode" = check ]; then
    targets=("${all_targets[@]}"); seconds=${1:-5}
else
    target=${1:-all}; runs=${2:-1000000}
    if [ "$target" = all ]; then targets=("${all_targets[@]}"); else targets=("$target"); fi
    for t in "${targets[@]}"; do
        [ -f "$fuzz/$t.swift" ] || { echo "fuzz.sh: no target '$t' (one of: ${all_targets[*]})" >&2; exit 2; }
    done
fi

sources="$kvstore_sources $(ls "$fuzz"/*.swift)"
mkdir -p "$build"
# Rebuild only when a source is newer than the binary.
if [ ! -x "$binary" ] || [ -n "$(find $sources -newer "$binary" | head -1)" ]; then
    echo "fuzz.sh: building $binary"
    # shellcheck disable=SC2086
    if ! swiftc -sanitize=fuzzer,address -parse-as-library -O -wmo -suppress-warnings -module-name KVStoreFuzz \
            -o "$binary.tmp" $crypto_flags $sources 2> "$build/build.log"; then
        if grep -q "sanitize=fuzzer\|libclang_rt.fuzzer" "$build/build.log"; then
            echo "fuzz.sh: skipped: this toolchain cannot build libFuzzer targets (see $build/build.log)"
            exit 0
        fi
        cat "$build/build.log" >&2
        exit 1
    fi
    mv "$binary.tmp" "$binary"
fi

mkdir -p "$fuzz/crashers"
status=0
for t in "${targets[@]}"; do
    corpus=$fuzz/corpus/$t
    work=$(mktemp -d "/tmp/kvfs-fuzz-$t-XXXXXX")
    mkdir -p "$corpus" "$work/new" "$work/merged"
    # Journals are checksummed byte by byte: small inputs keep the frame reader's
    # fuzzing fast (its cost on large input is measured by --measure and the tests).
    max_len=8192
    [ "$t" = journal-frame ] && max_len=1024
    options=(-timeout=30 -rss_limit_mb=2048 "-max_len=$max_len" -print_final_stats=1 "-artifact_prefix=$fuzz/crashers/$t-")
    if [ "$mode" = check ]; then
        options+=(-max_total_time="$seconds")
    else
        options+=(-runs="$runs")
    fi
    if KVFS_FUZZ_TARGET=$t nice -n 10 "$binary" "${options[@]}" "$work/new" "$corpus" > "$work/log" 2>&1; then
        outcome=ok
    else
        outcome="FAILED (input kept in Tests/Fuzz/crashers/; log: $work/log)"
        status=1
    fi
    inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
    echo "fuzz $t: ${inputs:-0} inputs, $outcome"
    if [ "$mode" = fuzz ] && [ "$outcome" = ok ]; then
        KVFS_FUZZ_TARGET=$t "$binary" -merge=1 "-max_len=$max_len" "$work/merged" "$corpus" "$work/new" > "$work/merge.log" 2>&1
        rm -f "$corpus"/*
        cp "$work/merged"/* "$corpus"/
        echo "fuzz $t: corpus minimised to $(ls "$corpus" | wc -l) inputs"
    fi
    [ "$outcome" = ok ] && rm -rf "$work"
done
exit $status
