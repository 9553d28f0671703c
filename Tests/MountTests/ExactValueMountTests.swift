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
///
/// What each value must come back as is worked out in Python from those
/// rules and written with plistlib too: nothing of kvfs's own file form
/// (`FileForm`) goes into the expectation.
@Suite("Exact values through a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct ExactValueMountTests {
    static let count = 200

    @Test func randomValuesSurviveTheFileFormAndTheCommandLineBitForBit() throws {
        try withMount { sandbox in
            let seed = TestSeed.draw("ExactValueMountTests", below: 1 << 32)
            try sandbox.ok(#"""
                mkdir -p $T/values $T/form $T/expected
                python3 - \#(seed) \#(Self.count) <<'PY'
                import datetime, math, os, plistlib, random, struct, sys
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
                # What the file form keeps (the rules of docs/files.md, worked out here): a key's own date to the
                # millisecond (rounded, as its text), a date inside an array or dictionary to the second (rounded
                # down, as XML property lists write it), and there every NaN as the one NaN; the rest exactly.
                EPOCH, UNIX = datetime.datetime(2001, 1, 1), 978307200.0
                NAN = struct.unpack('<d', struct.pack('<Q', 0x7FF8000000000000))[0]
                class Exact(datetime.datetime):
                    """A date of exactly `seconds` since 2001 (a double): plistlib writes a date as
                    (date - 2001-01-01).total_seconds(), on a microsecond grid, which the dates kept are not on."""
                    def __new__(cls, seconds):
                        date = super().__new__(cls, 2001, 1, 1)
                        date.seconds = seconds
                        return date
                    def __sub__(self, other):
                        gap = datetime.timedelta.__new__(Seconds)
                        gap.exact = self.seconds - (other - EPOCH).total_seconds()
                        return gap
                    def __eq__(self, other): return isinstance(other, Exact) and struct.pack('<d', self.seconds) == struct.pack('<d', other.seconds)
                    def __hash__(self): return hash(self.seconds)
                class Seconds(datetime.timedelta):
                    def total_seconds(self): return self.exact
                def seconds(date): return date.seconds if isinstance(date, Exact) else (date - EPOCH).total_seconds()
                def to_millisecond(since2001):
                    interval = since2001 + UNIX
                    whole = math.floor(interval)
                    thousandths = (interval - whole) * 1000
                    millis = math.floor(thousandths) + (1 if thousandths - math.floor(thousandths) >= 0.5 else 0)
                    if millis == 1000: whole, millis = whole + 1, 0
                    fraction = float("0." + ("%03d" % millis).rstrip("0")) if millis else 0.0
                    return (float(whole) + fraction) - UNIX
                def kept(v, nested=False):
                    if isinstance(v, float) and nested and v != v: return NAN
                    if isinstance(v, datetime.datetime):
                        return Exact(float(math.floor(seconds(v))) if nested else to_millisecond(seconds(v)))
                    if isinstance(v, list): return [kept(e, True) for e in v]
                    if isinstance(v, dict): return {k: kept(e, True) for k, e in v.items()}
                    return v
                safe = []
                for i in range(int(sys.argv[2])):
                    v = value(0)
                    data = plistlib.dumps(v, fmt=plistlib.FMT_BINARY, sort_keys=False)
                    with open(f"values/k{i}", "wb") as f: f.write(data)
                    written = plistlib.loads(data)  # what the file holds (plistlib shares equal scalars: -0.0 may be 0.0)
                    assert plistlib.dumps(written, fmt=plistlib.FMT_BINARY, sort_keys=False) == data, f"k{i} does not read back exactly"
                    expected = kept(written)
                    if not isinstance(v, (bytes, str)) or (isinstance(v, str) and v and '\0' not in v and not v.endswith('\n')):
                        safe.append(f"k{i}")
                        expected = kept(expected)  # the command line takes the file form once more
                    with open(f"expected/k{i}", "wb") as f: f.write(plistlib.dumps(expected, fmt=plistlib.FMT_BINARY, sort_keys=False))
                open("safe", "w").write("\n".join(safe) + "\n")
                PY
                for f in values/*; do cp "$f" "$M/${f#values/}"; done
                for f in values/*; do k=${f#values/}; cat "$M/$k" > "form/$k"; cat "form/$k" > "$M/$k"; done
                # Each value goes back through standard input (`kvfs set KEY -`): a value that is itself `-` cannot
                # be an argument, as that asks for standard input (docs/command-line.md says so of kvfs set).
                while read -r k; do v=$(kvfs get "$k" $S); printf %s "$v" | kvfs set $S -- "$k" -; done < safe
                kvfs unmount $M
                """#, timeout: 600)
            let other = try DeviceStore(syncDirectory: URL(fileURLWithPath: sandbox.syncDirectory),
                                        stateDirectory: URL(fileURLWithPath: sandbox.path + "/other"), deviceName: "other", warn: { _ in })
            defer { other.close() }
            for index in 0..<Self.count {
                let key = "k\(index)"
                let written = try PropertyListValue(propertyListData: Data(contentsOf: URL(fileURLWithPath: sandbox.path + "/values/" + key)))
                let expected = try PropertyListValue(propertyListData: Data(contentsOf: URL(fileURLWithPath: sandbox.path + "/expected/" + key)))
                let seen = other.value(forKey: StoreKey(key))
                #expect(seen.map { RecordCodec.valueBytes($0) } == RecordCodec.valueBytes(expected),
                        "seed \(seed): \(key) written \(written), expected \(expected), seen \(seen.map { "\($0)" } ?? "nothing")")
            }
        }
    }
}
