import Foundation
import Testing
@testable import KVStore

/// Issue 9.1 through the mount and the command line: random values of every
/// type, nested, written as binary property lists (by Python's plistlib, a
/// real tool) through the mount, read back with `cat` and written again,
/// sent through `kvfs get` and `kvfs set`, then read by another device after
/// the daemon is gone. Each must be bit for bit what its file form keeps:
/// everything but a date's fraction (past the millisecond in a key's own
/// file, past the second inside an array or dictionary) and, inside an array
/// or dictionary, a NaN's sign and payload.
@Suite("Exact values through a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct ExactValueMountTests {
    static let count = 200

    @Test func randomValuesSurviveTheFileFormAndTheCommandLineBitForBit() throws {
        try withMount { sandbox in
            let seed = UInt64.random(in: 0..<1 << 32)
            try sandbox.ok(#"""
                mkdir -p $T/values $T/form
                python3 - \#(seed) \#(Self.count) <<'PY'
                import os, plistlib, random, struct, sys, datetime
                rng = random.Random(int(sys.argv[1]))
                def real():
                    kind = rng.randrange(4)
                    if kind == 0: return struct.unpack('<d', struct.pack('<Q', rng.getrandbits(64)))[0]
                    if kind == 1: return rng.choice([-0.0, 0.0, float('inf'), float('-inf'), 5e-324, 1e308, 0.1])
                    return rng.uniform(-1e6, 1e6)
                def text():
                    return ''.join(chr(rng.choice([rng.randrange(0x20, 0x7F), rng.randrange(0xA0, 0x250), rng.randrange(0x1F300, 0x1F700), rng.randrange(1, 0x20)]))
                                   for _ in range(rng.randrange(0, 10)))
                def value(depth):
                    kind = rng.randrange(8 if depth < 3 else 6)
                    if kind == 0: return text()
                    if kind == 1: return rng.randrange(-2**63, 2**63)
                    if kind == 2: return real()
                    if kind == 3: return rng.random() < 0.5
                    if kind == 4: return datetime.datetime(2001, 1, 1) + datetime.timedelta(seconds=rng.uniform(-1e9, 1e9))
                    if kind == 5: return bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 20)))
                    if kind == 6: return [value(depth + 1) for _ in range(rng.randrange(0, 4))]
                    return {text(): value(depth + 1) for _ in range(rng.randrange(0, 4))}
                safe = []
                for i in range(int(sys.argv[2])):
                    v = value(0)
                    with open(f"values/k{i}", "wb") as f: f.write(plistlib.dumps(v, fmt=plistlib.FMT_BINARY, sort_keys=False))
                    if not isinstance(v, (bytes, str)) or (isinstance(v, str) and v and '\0' not in v and not v.endswith('\n')):
                        safe.append(f"k{i}")
                open("safe", "w").write("\n".join(safe) + "\n")
                PY
                for f in values/*; do cp "$f" "$M/${f#values/}"; done
                for f in values/*; do k=${f#values/}; cat "$M/$k" > "form/$k"; cat "form/$k" > "$M/$k"; done
                while read -r k; do kvfs set $S -- "$k" "$(kvfs get "$k" $S)"; done < safe
                kvfs unmount $M
                """#, timeout: 600)
            let other = try DeviceStore(syncDirectory: URL(fileURLWithPath: sandbox.syncDirectory),
                                        stateDirectory: URL(fileURLWithPath: sandbox.path + "/other"), deviceName: "other", warn: { _ in })
            defer { other.close() }
            let safe = Set(try String(contentsOfFile: sandbox.path + "/safe", encoding: .utf8).split(separator: "\n").map(String.init))
            for index in 0..<Self.count {
                let key = "k\(index)"
                let written = try PropertyListValue(propertyListData: Data(contentsOf: URL(fileURLWithPath: sandbox.path + "/values/" + key)))
                // What the mount keeps after one trip through the file form; the command line goes through it once more.
                var expected = try FileForm.decode(FileForm.encode(written), key: key, existingType: written.type)
                if safe.contains(key) { expected = try FileForm.decode(FileForm.encode(expected), key: key, existingType: expected.type) }
                let seen = other.value(forKey: key)
                #expect(seen.map { RecordCodec.valueBytes($0) } == RecordCodec.valueBytes(expected),
                        "seed \(seed): \(key) written \(written), expected \(expected), seen \(seen.map { "\($0)" } ?? "nothing")")
            }
        }
    }
}
