import Foundation
import Testing
@testable import KVStore

/// Issue 23's property test: seeded random schedules on two or three
/// devices sharing one sync directory, through the library (no mounts):
/// writes (small values and values near the quota), removals, imports (one
/// batch of several keys), compactions, remounts (close and open again),
/// devices away, kills mid-write (a torn append the process could not take
/// back, through ``FaultyJournalFiles``, then the store opened again as after
/// a crash), retirements and store switches (the sync directory now holds
/// another, empty store: an account change). The retention is small enough,
/// in most schedules, that history crosses its budget again and again.
///
/// Each schedule ends with every device showing the reference model's values
/// (``ReferenceModel``), and the same history, every version's stamp, kind,
/// value and currency alike; and that history is the model's: each version
/// listed is one a device wrote, with its value, and every version the
/// retention keeps of all those written (``RetentionRule``, over every
/// version ever written, the current values always) is listed. (A
/// compaction drops for good what the retention let go of then, so the
/// devices may keep a version the model's floor, counting versions dropped
/// since, would not: the model bounds history from both sides.) Again after
/// every device is opened afresh from the files.
///
/// `KVFS_HISTORY_SEED=<n>` replays one schedule and reports every step;
/// `KVFS_HISTORY_SCHEDULES=<n>` runs more (or fewer) than the default 24, and
/// `KVFS_SEED_BASE=<n>` other seeds (from n on: `mount-scripts/soak.sh`).
@Suite("History of random schedules on several devices")
struct HistoryPropertyTests {
    static let batches = 4
    static var schedules: Int { ProcessInfo.processInfo.environment["KVFS_HISTORY_SCHEDULES"].flatMap(Int.init) ?? 24 }

    @Test("every device ends equal to the reference model, history included", arguments: 0..<batches)
    func schedules(batch: Int) throws {
        let seeds: [UInt64] = if let seed = ProcessInfo.processInfo.environment["KVFS_HISTORY_SEED"].flatMap(UInt64.init) {
            batch == 0 ? [seed] : []
        } else {
            (0..<Self.schedules).filter { $0 % Self.batches == batch }.map { (ProcessInfo.processInfo.environment["KVFS_SEED_BASE"].flatMap(UInt64.init) ?? 0x6869_7374_0000) + UInt64($0) }
        }
        for seed in seeds { check(seed: seed) }
    }

    private func check(seed: UInt64) {
        let replaying = ProcessInfo.processInfo.environment["KVFS_HISTORY_SEED"] != nil
        let root = TemporaryFolder("kvfs-history-schedule", inMemory: true)
        defer { root.cleanup() }
        var schedule: HistorySchedule?
        defer { schedule?.stop() }
        func report(_ problem: String) {
            let steps = replaying ? schedule?.trace ?? [] : Array((schedule?.trace ?? []).suffix(40))
            Issue.record("""
                seed \(seed) (replay with KVFS_HISTORY_SEED=\(seed)): \(problem)
                  \(replaying ? "the" : "last") steps:
                      \(steps.joined(separator: "\n      "))
                """)
        }
        do {
            let made = try HistorySchedule(seed: seed, root: root.path)
            schedule = made
            var random = SeededRandom(seed: ~seed)
            made.run(steps: Int.random(in: 30...90, using: &random))
            for pass in ["at the end", "after every device opened again"] {
                if pass != "at the end" { try made.restartAll() } else { try made.finish() }
                if let problem = made.differences() { return report("\(pass): \(problem)") }
            }
        } catch {
            report("\(error)")
        }
    }
}

/// One schedule's devices, model and steps (see ``HistoryPropertyTests``).
final class HistorySchedule {
    /// One device: its store while it runs, opened on a disk that can tear an append.
    final class Device {
        let name: String
        let state: String
        let disk = FaultyJournalFiles()
        var store: DeviceStore?
        var id: DeviceID?
        var isRetired = false

        init(name: String, state: String) {
            self.name = name
            self.state = state
        }
    }

    let devices: [Device]
    private(set) var model = ReferenceModel()
    private(set) var trace: [String] = []
    private var random: SeededRandom
    private let sync: String
    private let time = SimulatedTime()
    /// The devices' background work (compactions a write made due, ticks), run when the seed says.
    private let scheduler = SimulatedScheduler()
    private let retention: HistoryRetention
    /// Store switches so far: each gives the sync directory another store id.
    private var switches = 0
    private static let keys: [StoreKey] = ["a", "b", "c", "d"]
    /// Values whose sizes reach toward the quota (1 MB for the store): two or three of them pass it.
    private static let bigValues = [300_000, 450_000, 700_000].map { PropertyListValue.data(Data(repeating: 9, count: $0)) }

    init(seed: UInt64, root: String) throws {
        var random = SeededRandom(seed: seed)
        sync = root + "/sync"
        let count = Int.random(in: 2...3, using: &random)
        retention = HistoryRetention(days: 30, bytes: random.pick([3_000, 40_000, 900_000, 8 << 20]))
        devices = try (0..<count).map { index in
            var id: [UInt8] = []
            for _ in 0..<16 { id.append(UInt8.random(in: 0...255, using: &random)) }
            let state = root + "/state-\(index)"
            try Files.makeDirectory(state)
            try Files.writeAtomically(state + "/device-id", Array((DeviceID(bytes: id).hex + "\n").utf8))
            return Device(name: "dev\(index)", state: state)
        }
        self.random = random
        trace.append("seed \(seed): \(count) devices, retention \(retention)")
        for device in devices { try start(device) }
        try devices[0].store?.setRetention(retention)
        for device in devices { device.store?.refresh() }
    }

    private func start(_ device: Device) throws {
        let time = self.time
        let store = try DeviceStore(syncDirectory: URL(fileURLWithPath: sync), stateDirectory: URL(fileURLWithPath: device.state),
                                    deviceName: device.name, clock: HybridLogicalClock { time.now }, warn: { _ in },
                                    journalFiles: device.disk, lanes: scheduler.lanes(for: device.name))
        store.journal.folder.withLock { $0.writer.compactionFloor = 4096 }
        store.progress.interval = .infinity  // published by the schedule, so that runs replay exactly
        let model = self.model
        store.notifier.listenToAppends { model.add($0) }
        device.store = store
        device.id = store.deviceID
    }

    private func stop(_ device: Device) {
        device.store?.close()
        device.store = nil
    }

    /// Closes every store.
    func stop() { for device in devices { stop(device) } }

    private var active: [Device] { devices.filter { !$0.isRetired } }

    /// Takes `steps` random steps.
    func run(steps: Int) {
        for _ in 0..<steps {
            let device = random.pick(active)
            time.advance(by: UInt64.random(in: 1...40, using: &random))
            guard let store = device.store else {
                step("\(device.name) comes back") { try start(device) }
                continue
            }
            let key = random.pick(Self.keys)
            switch random.next() % 110 {
            case 0..<30:
                let value = PropertyListValue.integer(Int64(random.next() % 1000))
                step("\(device.name) sets \(key) = \(value)") { try store.set(value, forKey: key) }
            case 30..<38:
                let value = random.pick(Self.bigValues)
                step("\(device.name) sets \(key) to \(FileForm.encode(value).count) bytes") { try store.set(value, forKey: key) }
            case 38..<48: step("\(device.name) removes \(key)") { try store.removeValue(forKey: key) }
            case 48..<56:
                var values: [StoreKey: PropertyListValue] = [:]
                for _ in 0..<Int.random(in: 2...3, using: &random) {
                    values[random.pick(Self.keys)] = .string("import \(random.next() % 100)")
                }
                let listed = values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                step("\(device.name) imports \(listed)") { try store.setValues(values) }
            case 56..<70: step("\(device.name) refreshes") { store.refresh() }
            case 70..<78: step("\(device.name) compacts") { store.compact() }
            case 78..<84: step("\(device.name) remounts") { stop(device); try start(device) }
            case 84..<88: step("\(device.name) goes away") { stop(device) }
            case 88..<94: killMidWrite(device, key: key)
            case 94..<97: step("\(device.name) publishes progress") { store.publishProgress() }
            case 97..<99: retireAnother(from: device)
            case 99: switchStore()
            default: trace.append(scheduler.runOne(using: &random).map { "\($0) runs" } ?? "no background work waits")
            }
        }
    }

    private func step(_ description: String, _ action: () throws -> Void) {
        trace.append(description)
        do { try action() } catch { trace.append("  → \(error)") }
    }

    /// `device`'s process dies part way through appending a write: part of
    /// its record is in the segment, and it could not be taken back. The
    /// write was never acknowledged; the store opens again as after a crash.
    private func killMidWrite(_ device: Device, key: StoreKey) {
        let torn = Int.random(in: 1...20, using: &random)
        step("\(device.name) dies \(torn) bytes into writing \(key)") {
            // A compaction an earlier write queued appends its close mark to the segment it leaves: the fault is the write's.
            device.store?.compactor.waitUntilIdle()
            device.disk.inject { $0.nextAppends = [(bytes: torn, errno: .ioError)]; $0.truncate = .ioError }
            defer { device.disk.inject { $0 = Faults() } }
            #expect(throws: KVStoreError.self) { try device.store?.set(.string("torn"), forKey: key) }
            stop(device)
        }
        step("\(device.name) starts again") { try start(device) }
    }

    /// `device` retires another one, which stops for good first.
    private func retireAnother(from device: Device) {
        guard let store = device.store, active.count > 2,
              let other = active.filter({ $0 !== device && $0.id != nil }).randomElement(using: &random), let id = other.id else { return }
        step("\(device.name) retires \(other.name)") {
            stop(other)
            other.isRetired = true
            _ = try store.retire(id, force: true)
        }
    }

    /// The sync directory now holds another store, empty: every device
    /// that runs notices at its next refresh (done at once, before any other
    /// step, but after each compacts, as one a write queued may: whatever
    /// the machine's load, a compaction falls between the switch and the
    /// refresh that notices it), and one away notices as it opens. What the
    /// model knows goes.
    private func switchStore() {
        step("the sync directory switches to another store") {
            switches += 1
            // A compaction a write queued before the switch runs when the schedule says, after it too.
            // The id first: a device that found its folder gone under the old id would rightly write it again.
            try Files.writeAtomically(sync + "/store-id", Array("another-store-\(switches)\n".utf8))
            try? FileManager.default.removeItem(atPath: sync + "/devices")
            model = ReferenceModel()
            // A compaction a write made due may start (on the compactor's queue) before a device notices the switch.
            for device in active { device.store?.compact() }
            for device in active {
                let model = self.model
                device.store?.notifier.listenToAppends { model.add($0) }
                device.store?.refresh()
            }
            try devices[0].store?.setRetention(retention)
        }
    }

    /// Starts every device, and refreshes until all have read the same files.
    func finish() throws {
        for device in active where device.store == nil { try start(device) }
        for _ in 0..<3 {
            for device in active { device.store?.refresh() }
            for device in active { device.store?.publishProgress() }
        }
    }

    /// Stops and starts every device: each reads its store again from the files alone.
    func restartAll() throws {
        for device in devices { stop(device) }
        for device in active { try start(device) }
        for device in active { device.store?.refresh() }
    }

    /// One version as history lists it, for comparing.
    struct Listed: Equatable, CustomStringConvertible {
        var stamp: Stamp, isRemoval: Bool, isCurrent: Bool, value: PropertyListValue?
        var description: String {
            let shown = value.map { if case let .data(data) = $0 { "<\(data.count) bytes>" } else { "\($0)" } } ?? "removed"
            return "\(stamp.time.rawValue)@\(stamp.device.hex.prefix(4))\(isCurrent ? "*" : "") \(shown)"
        }
    }

    /// What is wrong with the devices' values and histories, or nil.
    func differences() -> String? {
        let expected = model.values()
        var histories: [String: [StoreKey: [Listed]]] = [:]
        for device in active {
            guard let store = device.store else { return "\(device.name) is not running" }
            if store.values != expected {
                return "\(device.name) shows \(describe(store.values)), the model \(describe(expected))"
            }
            var history: [StoreKey: [Listed]] = [:]
            for key in Set(store.historyKeys + Self.keys) {
                let listed = store.history(forKey: key).map { version in
                    Listed(stamp: version.stamp, isRemoval: version.isRemoval, isCurrent: version.isCurrent,
                           value: try? store.value(of: version))
                }
                if !listed.isEmpty { history[key] = listed }
            }
            histories[device.name] = history
        }
        let first = active[0].name
        for device in active.dropFirst() where histories[device.name]! != histories[first]! {
            return "the histories of \(first) and \(device.name) differ:\n\(describe(histories[first]!))\n\(describe(histories[device.name]!))"
        }
        return historyProblem(histories[first]!)
    }

    /// What is wrong with `history` against the model's versions, or nil.
    private func historyProblem(_ history: [StoreKey: [Listed]]) -> String? {
        // Every version written, each once, and the current one of each key.
        var written: [Stamp: [StoreKey: PropertyListValue?]] = [:]
        var charges: [Stamp: [StoreKey: Int]] = [:]
        var winners: [StoreKey: Stamp] = [:]
        for record in model.written {
            for (key, value, base, rank) in record.changesWithBases {
                written[record.stamp, default: [:]][key] = value
                charges[record.stamp, default: [:]][key] = RetentionRule.charge(key: key, value: value, base: base, rank: rank)
                if winners[key].map({ $0 < record.stamp }) ?? true { winners[key] = record.stamp }
            }
        }
        // Whether `version` is the key's current one as the model has it. A removal is current, too, where a later
        // removal of its key, the winner, was collected (TombstoneCollection) and left out by the retention: the key is
        // removed either way, and each folder's compaction, at its own time with its own floor, may keep an older one.
        func isCurrent(_ version: Listed, of key: StoreKey, in versions: [Listed]) -> Bool {
            guard let winner = winners[key] else { return false }
            if winner == version.stamp { return true }
            return version.isRemoval && winner > version.stamp && written[winner]?[key] == .some(nil) && !versions.contains { $0.stamp == winner }
        }
        for (key, versions) in history {
            for version in versions {
                guard let value = written[version.stamp]?[key] else { return "\(key): \(version) was never written" }
                if version.isRemoval != (value == nil) || version.value != value || version.isCurrent != isCurrent(version, of: key, in: versions) {
                    return "\(key): \(version) is not as written (\(value.map { "\($0)".prefix(40) } ?? "removed"))"
                }
            }
        }
        let candidates = written.flatMap { stamp, changes in
            changes.compactMap { key, value -> (key: StoreKey, stamp: Stamp, charge: Int)? in
                if value != nil && winners[key] == stamp { return nil }  // a current value
                return (key, stamp, charges[stamp]![key]!)
            }
        }
        let floor = RetentionRule.overBudget(candidates.map { RetentionRule.Candidate(stamp: $0.stamp, charge: $0.charge) },
                                             bytes: retention.bytes)
        for (key, stamp) in winners where written[stamp]?[key]! != nil {
            if !(history[key] ?? []).contains(where: { $0.stamp == stamp }) { return "\(key): its current value \(stamp) is not listed" }
        }
        for candidate in candidates where floor.map({ candidate.stamp > $0 }) ?? true {
            if !(history[candidate.key] ?? []).contains(where: { $0.stamp == candidate.stamp }) {
                return "\(candidate.key): version \(candidate.stamp.time.rawValue) is within the retention but not listed:\n\(describe(history))"
            }
        }
        return nil
    }

    private func describe(_ values: [StoreKey: PropertyListValue]) -> String {
        values.sorted { $0.key < $1.key }.map { key, value in
            if case let .data(data) = value { return "\(key)=<\(data.count) bytes>" }
            return "\(key)=\(value)"
        }.joined(separator: " ")
    }

    private func describe(_ history: [StoreKey: [Listed]]) -> String {
        history.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value.map(\.description).joined(separator: ", "))" }.joined(separator: "\n")
    }
}
