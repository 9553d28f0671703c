import Foundation
import Testing
@testable import KVStore

/// The merge is a function of the records per device: commutative,
/// associative and idempotent, quota rule included, and a device's snapshot
/// replacing its records gives what a fresh merge of the new files gives.
@Suite("Merge properties")
struct MergePropertyTests {
    private static let devices = (0..<3).map { _ in DeviceID.random() }
    private static let big = [400_000, 700_000].map { PropertyListValue.data(Data(repeating: 1, count: $0)) }

    /// Random records over a few keys and a few clock values, so that stamps
    /// collide across devices; now and then two different records share one
    /// stamp, as only a cloned device id writes them.
    private func randomRecords(_ random: inout SeededRandom, count: Int, bigValues: Bool) -> [JournalRecord] {
        let keys: [StoreKey] = ["a", "b", "c", "d"]
        var records: [JournalRecord] = []
        for _ in 0..<count {
            let stamp = Stamp(time: HLCTimestamp(milliseconds: UInt64.random(in: 1...12, using: &random), counter: 0),
                              device: random.pick(Self.devices))
            let key = random.pick(keys)
            let value: PropertyListValue = bigValues && random.chance(0.4) ? random.pick(Self.big) : .integer(Int64(random.next() % 5))
            let operation: JournalRecord.Operation = switch random.next() % 4 {
            case 0: .remove(key: key)
            case 1: .rename(from: key, to: random.pick(keys.filter { $0 != key }), value: value)
            default: .put(key: key, value: value)
            }
            records.append(JournalRecord(stamp: stamp, operation: operation))
        }
        return records
    }

    /// What two merges must agree on.
    private func summary(_ state: MergedState) -> String {
        let winners = state.winners.sorted { $0.key < $1.key }.map { "\($0.key)@\($0.value.stamp.time.rawValue)/\($0.value.stamp.device.hex.prefix(4))=\(String(describing: $0.value.value?.value))" }
        return "\(winners) visible \(state.visible.keys.sorted()) aside \(state.setAside.sorted()) \(state.usage)"
    }

    @Test("any order, any batching, any repetition: one result", arguments: 0..<300)
    func orderDoesNotMatter(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let records = randomRecords(&random, count: Int.random(in: 1...40, using: &random), bigValues: seed % 3 == 0)
        var inOrder = MergedState()
        inOrder.applyInStampersFolders(records)
        var shuffled = MergedState()
        var rest = (records + records.filter { _ in random.chance(0.3) }).shuffled(using: &random)
        while !rest.isEmpty {
            let batch = Int.random(in: 1...rest.count, using: &random)
            shuffled.applyInStampersFolders(Array(rest.prefix(batch)))
            rest.removeFirst(batch)
        }
        #expect(summary(inOrder) == summary(shuffled), "seed \(seed)")
        #expect(inOrder.usage.isWithinLimits)
    }

    @Test("a device's records replaced by its snapshot: what a fresh merge of the files gives", arguments: 0..<200)
    func replacingIsAFreshMerge(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let records = randomRecords(&random, count: Int.random(in: 1...40, using: &random), bigValues: seed % 3 == 0)
        let device = Self.devices[0]
        let snapshot = randomRecords(&random, count: Int.random(in: 0...10, using: &random), bigValues: false)
            .map { JournalRecord(stamp: Stamp(time: $0.stamp.time, device: device), operation: $0.operation) }
        var incremental = MergedState()
        incremental.applyInStampersFolders(records)
        _ = incremental.replace(recordsIn: device, with: snapshot)
        var fresh = MergedState()
        fresh.applyInStampersFolders(records.filter { $0.stamp.device != device } + snapshot)
        #expect(summary(incremental) == summary(fresh), "seed \(seed)")
    }

    @Test func theKeyLimitSetsAsideTheNewestKeysAlike() {
        let (a, b) = (Self.devices[0], Self.devices[1])
        let records = (0..<700).flatMap { n in
            [record(a, UInt64(2 * n), .put(key: "a\(n)", value: .bool(true))),
             record(b, UInt64(2 * n + 1), .put(key: "b\(n)", value: .bool(true)))]
        }
        var forward = MergedState(), backward = MergedState()
        forward.applyInStampersFolders(records)
        backward.applyInStampersFolders(records.reversed())
        #expect(forward.visible.count == 1024 && forward.setAside.count == 376)
        #expect(forward.setAside.contains("b699") && forward.visible["a511"] != nil && forward.visible["a512"] == nil)
        #expect(summary(forward) == summary(backward))
        forward.applyInStampersFolders([record(a, 5000, .remove(key: "a0"))])  // room for one more: the oldest set aside comes back
        #expect(forward.visible["a512"] != nil && forward.visible.count == 1024)
    }
}

private extension MergedState {
    /// Merges each record as read from the folder of the device that stamped it.
    mutating func applyInStampersFolders(_ records: [JournalRecord]) {
        for record in records { _ = apply([record], in: record.stamp.device) }
    }
}
