import Foundation
import Testing
@testable import KVStore

/// The file form of an array or dictionary is an XML property list that
/// people read with the standard tools: Python's plistlib (what Linux has),
/// libplist's `plistutil`, Apple's `plutil`. Random values of all eight types,
/// nested in arrays and dictionaries, go through a real mount both ways and
/// are compared by those tools, reals bit for bit.
///
/// What the XML form does not keep (docs/files.md § Values and their files): a date's
/// fraction of a second (Apple's format has whole seconds; kvfs writes the
/// second the date falls in, as CoreFoundation does) and a NaN's sign and
/// payload (Apple's parser reads only `nan`). The store keeps both exactly.
@Suite("Property lists that Python's and libplist's tools read", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct PlistInteropTests {
    static let count = 150

    /// Python shared by the tests: `value()` makes a random array or dictionary
    /// (arguments: seed), `same(a, b)` compares strictly (types, reals by their
    /// bits), `as_xml_keeps(v)` is what an XML property list keeps of a value
    /// that a binary document holds.
    static let python = #"""
        import datetime, math, os, plistlib, random, struct, sys
        EPOCH = datetime.datetime(2001, 1, 1)
        rng = random.Random(int(sys.argv[1]))
        M = os.environ["M"]

        def text():
            # Everything XML 1.0 can carry: tab, line feed and carriage return, markup characters, astral scalars.
            pieces = [lambda: chr(rng.randrange(0x20, 0x7F)), lambda: chr(rng.randrange(0xA0, 0x250)),
                      lambda: chr(rng.randrange(0x1F300, 0x1F700)), lambda: rng.choice(["\t", "\n", "\r", "\r\n", "<", "&", "]]>"])]
            return "".join(rng.choice(pieces)() for _ in range(rng.randrange(0, 10)))

        def real():
            kind = rng.randrange(4)
            if kind == 0: return struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]  # NaN payloads, subnormals, any exponent
            # No 0.0: plistlib's binary writer shares equal scalars, and 0.0 == -0.0.
            if kind == 1: return rng.choice([-0.0, math.inf, -math.inf, math.nan, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e-05, 1e300, 0.1])
            return rng.uniform(-1e6, 1e6)

        def date():
            if rng.random() < 0.5:  # around 1970, 2001 and now, where a fraction rounded the wrong way shows
                around = rng.choice([datetime.datetime(1970, 1, 1), EPOCH, datetime.datetime(2026, 1, 1)])
                when = around + datetime.timedelta(seconds=rng.randrange(-3, 3))
            else:  # years 1 to about 9980: Python's dates, and plistlib's four-digit years, end at 9999
                when = datetime.datetime(1, 1, 1) + datetime.timedelta(seconds=rng.randrange(315_000_000_000))
            return when.replace(microsecond=rng.choice([0, 1, 500_000, 999_999, rng.randrange(1_000_000)]))

        def value(depth=0):
            kind = rng.randrange(6, 8) if depth == 0 else rng.randrange(8 if depth < 3 else 6)
            if kind == 0: return text()
            if kind == 1: return rng.randrange(-2**63, 2**63)
            if kind == 2: return real()
            if kind == 3: return rng.random() < 0.5
            if kind == 4: return date()
            if kind == 5: return rng.randbytes(rng.randrange(0, 40))
            if kind == 6: return [value(depth + 1) for _ in range(rng.randrange(0, 6))]
            return {text(): value(depth + 1) for _ in range(rng.randrange(0, 6))}

        def bits(x): return struct.pack("<d", x)

        def same(a, b):
            if type(a) is not type(b): return False
            if isinstance(a, float): return bits(a) == bits(b)
            if isinstance(a, list): return len(a) == len(b) and all(map(same, a, b))
            if isinstance(a, dict): return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
            return a == b

        def as_xml_keeps(v):
            # A date: the start of the second that the document's Double (seconds from 2001) falls in.
            if isinstance(v, datetime.datetime): return EPOCH + datetime.timedelta(seconds=math.floor((v - EPOCH).total_seconds()))
            if isinstance(v, float) and math.isnan(v): return math.nan
            if isinstance(v, list): return [as_xml_keeps(e) for e in v]
            if isinstance(v, dict): return {k: as_xml_keeps(e) for k, e in v.items()}
            return v

        failures = []
        def check(name, expected, seen):
            if not same(expected, seen): failures.append(f"{name}: expected {expected!r}, read {seen!r}")

        def report():
            print("\n".join(failures[:5]) + (f"\n… {len(failures)} in all" if failures else ""))
            sys.exit(1 if failures else 0)
        """#

    /// Values written through the mount as binary documents (which the store
    /// keeps bit for bit) show an XML file form that plistlib, and libplist
    /// where `plistutil` is installed, read as the same values, dates to the second.
    @Test func theXMLFileFormOfRandomValuesIsReadByPlistlibAndPlistutil() throws {
        try withMount { sandbox in
            let seed = TestSeed.draw("theXMLFileFormOfRandomValuesIsReadByPlistlibAndPlistutil", below: 1 << 32)
            let output = try sandbox.ok(#"""
                set -e
                mkdir -p form libplist
                python3 - \#(seed) \#(Self.count) <<'PY'
                \#(Self.python)
                import pickle
                values = [value() for _ in range(int(sys.argv[2]))]
                for i, v in enumerate(values):
                    with open(f"{M}/k{i}", "wb") as f: f.write(plistlib.dumps(v, fmt=plistlib.FMT_BINARY))
                for i, v in enumerate(values):
                    with open(f"{M}/k{i}", "rb") as f: form = f.read()
                    open(f"form/k{i}", "wb").write(form)
                    try: check(f"k{i} by plistlib", as_xml_keeps(v), plistlib.loads(form))
                    except Exception as error: failures.append(f"k{i}: plistlib refused the file form ({error!r}): {form[:600]!r}")
                pickle.dump(values, open("values.pickle", "wb"))
                report()
                PY
                if command -v plistutil >/dev/null; then
                    for f in form/*; do plistutil -i "$f" -o "libplist/${f#form/}" -f bin || echo "plistutil refused $f"; done
                    python3 - \#(seed) <<'PY'
                \#(Self.python)
                import pickle
                for i, v in enumerate(pickle.load(open("values.pickle", "rb"))):
                    check(f"k{i} by plistutil", as_xml_keeps(v), plistlib.loads(open(f"libplist/k{i}", "rb").read()))
                report()
                PY
                else
                    echo "plistutil is not installed (libplist-utils; mount-scripts/install-deps.sh installs it): only plistlib read the files"
                fi
                """#, timeout: 600)
            #expect(!output.contains("refused"), "seed \(seed): \(output)")
        }
    }

    /// Documents plistlib wrote, XML and binary, written through the mount:
    /// the store holds exactly what each document holds (another device reads
    /// it after unmount), and an XML document comes back through `cat` as the
    /// same values to plistlib.
    @Test func plistlibDocumentsWrittenThroughTheMountReadBackExactly() throws {
        try withMount { sandbox in
            let seed = TestSeed.draw("plistlibDocumentsWrittenThroughTheMountReadBackExactly", below: 1 << 32)
            try sandbox.ok(#"""
                set -e
                mkdir -p documents
                python3 - \#(seed) \#(Self.count) <<'PY'
                \#(Self.python)
                for i in range(int(sys.argv[2])):
                    v = value()
                    for name, document in [(f"x{i}", plistlib.dumps(v)), (f"b{i}", plistlib.dumps(v, fmt=plistlib.FMT_BINARY))]:
                        open(f"documents/{name}", "wb").write(document)
                        with open(f"{M}/{name}", "wb") as f: f.write(document)
                    with open(f"{M}/x{i}", "rb") as f: check(f"x{i} through cat", plistlib.loads(plistlib.dumps(v)), plistlib.loads(f.read()))
                report()
                PY
                kvfs unmount $M
                """#, timeout: 600)
            let other = try DeviceStore(syncDirectory: URL(fileURLWithPath: sandbox.syncDirectory),
                                        stateDirectory: URL(fileURLWithPath: sandbox.path + "/other"), deviceName: "other", warn: { _ in })
            defer { other.close() }
            for name in try FileManager.default.contentsOfDirectory(atPath: sandbox.path + "/documents").sorted() {
                let written = try PropertyListValue(propertyListData: Data(contentsOf: URL(fileURLWithPath: sandbox.path + "/documents/" + name)))
                let seen = other.value(forKey: StoreKey(name))
                #expect(seen.map { RecordCodec.valueBytes($0) } == RecordCodec.valueBytes(written),
                        "seed \(seed): \(name) written \(written), seen \(seen.map { "\($0)" } ?? "nothing")")
            }
        }
    }
}
