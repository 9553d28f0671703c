import Foundation
import Testing
@testable import KVStore

/// The scale test (docs/format.md § Limits): past every size boundary the
/// journal had (16 MiB, the one read of a file), with history on at the
/// largest retention allowed, on two devices and a third that joins late.
///
/// `KVFS_SCALE_MB` sets how many megabytes the two devices write (default
/// 40: a snapshot and a segment past 16 MiB, in under a minute in the
/// suite); `KVFS_BENCH_ONLY=scale mount-scripts/benchmark.sh` runs the long
/// form, past the retention's 128 MiB.
@Suite("Scale")
struct ScaleTests {
    let fixture = SyncFixture()
    static let megabytes = ProcessInfo.processInfo.environment["KVFS_SCALE_MB"].flatMap(Int.init) ?? 40

    /// A value of about 400 KB, different for each round and key.
    private func big(_ round: Int, _ key: String) -> PropertyListValue {
        .string("\(key) \(round) " + String(repeating: Character(UnicodeScalar(UInt8(97 + round % 26))), count: 400_000))
    }

    /// The sizes of the largest snapshot and segment in `store`'s folder now.
    private func sizes(_ store: DeviceStore) -> (snapshot: Int, segment: Int) {
        let folder = fixture.folder(of: store)
        let sizes = Files.list(folder).map { name in
            (name, (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int) ?? 0)
        }
        return (sizes.filter { $0.0.hasSuffix(".snap") }.map(\.1).max() ?? 0, sizes.filter { $0.0.hasSuffix(".log") }.map(\.1).max() ?? 0)
    }

    @Test("every value and every version's every field is identical on two devices and a late third, after remounts and compactions, past 16 MiB")
    func everythingIdenticalAtScale() throws {
        var fixture = self.fixture
        fixture.retention = HistoryRetention(days: HistoryRetention.maximumDays, bytes: HistoryRetention.maximumBytes)
        defer { fixture.cleanup() }
        var a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close() }
        let started = ContinuousClock.now
        var largest = (snapshot: 0, segment: 0)
        func note(_ store: DeviceStore) {
            let now = sizes(store)
            largest = (max(largest.snapshot, now.snapshot), max(largest.segment, now.segment))
        }
        try a.set(.string("written first"), forKey: "early")
        let longKeys = (0..<20).map { StoreKey(String(repeating: "long key ", count: 13) + "\($0)") }  // 120 characters
        let rounds = Self.megabytes * 1_000_000 / 400_000
        for round in 0..<rounds {
            // Four fifths from a, one from b, each reading the other now and then.
            if round % 5 == 4 {
                try b.set(big(round, "b"), forKey: "b-big")
                note(b)
                a.refresh()
            } else {
                try a.set(big(round, "a"), forKey: "a-big")
                note(a)
            }
            if round % 10 == 0 {
                for key in longKeys { try a.set(.integer(Int64(round)), forKey: key) }  // long keys, short values
                try b.setValues(Dictionary(uniqueKeysWithValues: (0..<30).map { (StoreKey("import \($0)"), PropertyListValue.integer(Int64(round))) }))
                try a.removeValue(forKey: longKeys[round / 10 % longKeys.count])
                b.refresh()
            }
        }
        a.close()
        b.close()
        a = try fixture.open("a")
        b = try fixture.open("b")
        a.compact()
        b.compact()
        note(a)
        note(b)
        print("scale: \(Self.megabytes) MB written in \(rounds) rounds; largest snapshot \(largest.snapshot) bytes, largest segment \(largest.segment) bytes")
        #expect(largest.snapshot > 16 << 20 && largest.segment > 16 << 20, "\(largest)")
        let late = try fixture.open("late")
        defer { late.close() }
        for store in [a, b] { store.refresh() }
        let expected = everyVersion(a)
        #expect(a.value(forKey: "early") == .string("written first"))
        #expect(expected.count > rounds, "\(expected.count) versions")
        for store in [b, late] {
            #expect(store.values == a.values)
            #expect(everyVersion(store) == expected)
        }
        late.compact()
        a.compact()
        for store in [a, b, late] { store.refresh() }
        for store in [a, b, late] {
            #expect(store.values == a.values && store.value(forKey: "early") == .string("written first"))
            #expect(everyVersion(store) == expected)
        }
        print("scale: at the end, snapshot and segment of a \(sizes(a)), b \(sizes(b)), late \(sizes(late)) bytes; \(expected.count) versions; \(ContinuousClock.now - started)")
    }
}
