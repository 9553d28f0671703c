import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// The library's history (docs/swift.md § History): `history(forKey:)` and
    /// `restore(_:forKey:)` on either store, the in-memory one included.
    @Suite("History through the library")
    struct HistoryLibraryTests {
        @Test("history(forKey:) lists every version oldest first, with its value, its device and the current one marked",
              arguments: StoreKind.allCases)
        func history(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                try store.setValue(.integer(1), forKey: "k")
                try store.setValue(.string("two"), forKey: "k")
                try store.removeValue(forKey: "k")
                try fixture.changeExternally(["k": .bool(true)])
                let history = store.history(forKey: "k")
                #expect(history.map(\.value) == [.integer(1), .string("two"), nil, .bool(true)])
                #expect(history.map(\.isRemoval) == [false, false, true, false])
                #expect(history.map(\.isCurrent) == [false, false, false, true])
                #expect(history.map(\.size) == [2, 4, 0, 5])
                #expect(history.map(\.date) == history.map(\.date).sorted())
                #expect(history[0].deviceID != history[3].deviceID && history[0].deviceName != history[3].deviceName)
                #expect(history[2].name.hasSuffix(VersionName.removedSuffix))
                #expect(store.history(forKey: "never").isEmpty)
            }
        }

        @Test("restore(_:forKey:) writes an old version as the newest; a removal's restore removes the key",
              arguments: StoreKind.allCases)
        func restore(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                try store.setValue(.string("first"), forKey: "k")
                try store.setValue(.string("second"), forKey: "k")
                try store.removeValue(forKey: "k")
                let first = try #require(store.history(forKey: "k").first)
                try store.restore(first, forKey: "k")
                #expect(store.value(forKey: "k") == .string("first"))
                let history = store.history(forKey: "k")
                #expect(history.count == 4 && history.last?.isCurrent == true && history.last?.stamp != first.stamp)
                let removal = try #require(history.first { $0.isRemoval })
                try store.restore(removal, forKey: "k")
                #expect(store.value(forKey: "k") == nil)
                #expect(throws: KVStoreError.self) { try store.restore(removal, forKey: "k") }  // removed already
                if kind == .syncDirectory {  // the restored version syncs like any write
                    try store.restore(first, forKey: "k")
                    let other = try fixture.openDevice("reader")
                    #expect(other.value(forKey: "k") == .string("first"))
                    #expect(other.history(forKey: "k").last?.value == .string("first"))
                }
            }
        }

        @Test("the in-memory store keeps what its retention keeps: the current value always, older ones within the bytes")
        func inMemoryRetention() throws {
            // Each older version counts its record: the key, an integer, and a base (the version before it).
            let charge = RetentionRule.charge(key: "k", value: .integer(1), base: .version(Stamp(time: HLCTimestamp(rawValue: 1), device: .random())), rank: nil)
            let store = InMemoryKeyValueStore(retention: HistoryRetention(days: 30, bytes: 2 * charge))
            for value in 1...5 { try store.setValue(.integer(Int64(value)), forKey: "k") }
            #expect(store.history(forKey: "k").map(\.value) == [.integer(3), .integer(4), .integer(5)])
            let off = InMemoryKeyValueStore(retention: .off)
            try off.setValue(.integer(1), forKey: "k")
            try off.setValue(.integer(2), forKey: "k")
            try off.removeValue(forKey: "j")  // a missing key: no version
            #expect(off.history(forKey: "k").map(\.value) == [.integer(2)] && off.history(forKey: "j").isEmpty)
        }

        @Test("the in-memory retention drops what RetentionRule drops, write after write, as the budget is crossed again and again")
        func inMemoryRetentionFollowsTheRule() throws {
            let someStamp = Stamp(time: HLCTimestamp(rawValue: 1), device: .random())
            let retention = HistoryRetention(days: 30, bytes: 12 * RetentionRule.charge(key: "k0", value: .integer(100), base: .version(someStamp), rank: nil))
            let store = InMemoryKeyValueStore(retention: retention)
            // The rule as 0b953bb applied it, weighing every version at each write: what is kept, per key, oldest first.
            // Each version with whether its key had a version before it when it was written (its record's base).
            var model: [(key: String, value: PropertyListValue?, hasBase: Bool)] = []
            var generator = SeededRandom(seed: 23)
            for step in 0..<600 {
                let key = "k\(generator.next() % 5)"
                let isCurrent = { (index: Int) in
                    model[index].value != nil && !model[(index + 1)...].contains { $0.key == model[index].key }
                }
                switch generator.next() % 6 {
                case 0:
                    guard store.value(forKey: key) != nil else { continue }
                    try store.removeValue(forKey: key)
                    model.append((key, nil, model.contains { $0.key == key }))
                case 1:
                    let value = PropertyListValue.string(String(repeating: "x", count: Int(generator.next() % 40)))
                    store.simulateExternalChange([StoreKey(key): value])
                    model.append((key, value, model.contains { $0.key == key }))
                default:
                    let value = PropertyListValue.integer(Int64(step))
                    try store.setValue(value, forKey: key)
                    model.append((key, value, model.contains { $0.key == key }))
                }
                let candidates = model.indices.filter { !isCurrent($0) }.map {
                    RetentionRule.Candidate(stamp: Stamp(time: HLCTimestamp(rawValue: UInt64($0)), device: DeviceID(hex: String(repeating: "0", count: 32))!),
                                            charge: RetentionRule.charge(key: StoreKey(model[$0].key), value: model[$0].value,
                                                                         base: model[$0].hasBase ? .version(someStamp) : .nothing, rank: nil))
                }
                let overBudget = RetentionRule.overBudget(candidates, bytes: retention.bytes).map { Int($0.time.rawValue) } ?? -1
                model = model.indices.filter { isCurrent($0) || $0 > overBudget }.map { model[$0] }
                for key in Set(model.map(\.key)) {
                    #expect(store.history(forKey: key).map(\.value) == model.filter { $0.key == key }.map(\.value), "step \(step), \(key)")
                }
            }
        }

        @Test("a write to the in-memory store weighs a bounded number of versions however long the history (all of them at 0b953bb)")
        func inMemoryWriteCostIsBounded() throws {
            for retention in [HistoryRetention.standard, HistoryRetention(days: 30, bytes: 10_000)] {
                let store = InMemoryKeyValueStore(retention: retention)
                for index in 0..<3_000 { try store.setValue(.integer(Int64(index)), forKey: "key-\(index % 20)") }
                let before = store.retentionWork
                for index in 3_000..<4_000 { try store.setValue(.integer(Int64(index)), forKey: "key-\(index % 20)") }
                // Each version is weighed once as it stops being current and once as it is dropped.
                #expect(store.retentionWork - before <= 2 * 1_000, "\(retention)")
            }
        }
    }
}
