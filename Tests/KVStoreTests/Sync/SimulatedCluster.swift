import Foundation
import Testing
@testable import KVStore

/// Two to five devices sharing a store, driven by one seeded random schedule:
/// writes of every kind (quota-passing ones included), refreshes, deliveries
/// by the ``SimulatedSynchronizer`` (or one shared folder, without one),
/// restarts, devices away for a while, partitions, compactions, progress
/// publications, devices retired, device folders that vanish (by mistake, or
/// for a moment on one replica), and wall clocks up to an hour apart (or
/// `clockSpread` milliseconds: past ``HybridLogicalClock/maximumOffset``
/// devices hold each other's records back, and ``finish()`` lets the clocks
/// catch up first).
///
/// The schedule is a function of the seed alone, in any process: every choice
/// comes from the seeded generator (the devices' ids too, which decide ties),
/// and none from a Dictionary's order, which differs from process to process.
final class SimulatedCluster {
    let seed: UInt64
    let devices: [SimulatedDevice]
    let model = ReferenceModel()
    /// The steps taken, for the failure report.
    private(set) var trace: [String] = []
    private var random: SeededRandom
    private let time = SimulatedTime()
    /// The devices' background work: compactions, ticks, prompt publications, run when the seed says.
    private let scheduler = SimulatedScheduler()
    private let synchronizer: SimulatedSynchronizer?
    /// Whether this schedule writes values big enough to pass the byte quota together.
    private let bigWrites: Bool
    /// Whether the store is sealed (``TestSealing``'s keys), from the start or by a conversion on the way:
    /// records are read once their mark is signed, a piece of background work; and no folder vanishes,
    /// which a sealed store refuses as a rollback.
    private var sealed: Bool
    private static let keys: [StoreKey] = ["a", "b", "c", "d", "e", "ключ"]
    private static let bigValues = [300_000, 420_000, 560_000].map { PropertyListValue.data(Data(repeating: 7, count: $0)) }

    init(seed: UInt64, root: String, clockSpread: Int64 = 3_600_000) throws {
        self.seed = seed
        random = SeededRandom(seed: seed)
        let count = Int.random(in: 2...5, using: &random)
        let shared = random.chance(0.3)
        bigWrites = random.chance(0.3)
        sealed = random.chance(0.25)
        let syncDirectories = (0..<count).map { root + (shared ? "/sync" : "/replica-\($0)") }
        if sealed { for path in Set(syncDirectories) { TestSealing.seal(path) } }
        synchronizer = shared ? nil : SimulatedSynchronizer(replicas: syncDirectories)
        var devices: [SimulatedDevice] = []
        for index in 0..<count {
            var id: [UInt8] = []
            for _ in 0..<16 { id.append(UInt8.random(in: 0...255, using: &random)) }
            try Self.plantDeviceID(DeviceID(bytes: id), in: root + "/state-\(index)")
            devices.append(SimulatedDevice(
                name: "dev\(index)", syncDirectory: URL(fileURLWithPath: syncDirectories[index]),
                stateDirectory: URL(fileURLWithPath: root + "/state-\(index)"),
                skew: Int64.random(in: -clockSpread...clockSpread, using: &random), time: time, model: model,
                scheduler: scheduler))
        }
        self.devices = devices
        trace.append("seed \(seed): \(count) devices, \(shared ? "one shared folder" : "replicas")\(sealed ? ", sealed" : ""), skews \(devices.map(\.skew))")
        try setUp()
    }

    /// Gives the device whose state lives in `state` its id before it first starts (a new device draws one at random).
    private static func plantDeviceID(_ id: DeviceID, in state: String) throws {
        try Files.makeDirectory(state)
        try Files.writeAtomically(state + "/device-id", Array((id.hex + "\n").utf8))
    }

    /// Starts every device; with replicas, the store id is copied first (as
    /// one starts the second machine once the folder has synced), and every
    /// device folder reaches every replica before the schedule starts.
    private func setUp() throws {
        try devices[0].start()
        try synchronizer?.shareStoreID()
        for device in devices.dropFirst() { try device.start() }
        for (index, device) in devices.enumerated() {
            synchronizer?.register(device: try #require(device.store).deviceID, name: device.name, replica: index)
        }
        synchronizer?.deliverAll()
        for device in devices { device.store?.refresh() }
        try plantJunk()
    }

    /// What synchronizers, Finder and people leave in a sync directory.
    private func plantJunk() throws {
        let root = devices[0].syncDirectory.path
        let folder = try #require(Files.list(root + "/devices").first { DeviceID(hex: $0) != nil })
        for (path, text) in [("/.DS_Store", "junk"), ("/devices/.DS_Store", "junk"), ("/devices/notes.txt", "hello"),
                             ("/devices/\(folder)/journal-0000000000000001.sync-conflict-20261122-035148-UZAMHDT.log", "x"),
                             ("/devices/\(folder)/.unison.journal.0123.unison.tmp", "x")] {
            try Files.writeAtomically(root + path, Array(text.utf8))
        }
    }

    /// Takes `steps` random steps.
    func run(steps: Int) {
        for _ in 0..<steps {
            let device = random.pick(active)
            time.advance(by: UInt64.random(in: 0...40, using: &random))
            switch random.next() % 111 {
            case 0..<50: write(on: device)
            case 50..<62: refresh(device)
            case 62..<85: deliver(orRefresh: device)
            case 85..<87: restart(device)
            case 87: killQueuedWork(of: device)
            case 88..<90: toggleRunning(device)
            case 90..<93: step("\(device.name) publishes progress") { device.publishProgress() }
            case 93..<96: step("\(device.name) compacts") { device.compact() }
            case 96: retireAnother(from: device)
            case 97 where !sealed: vanish(device)
            case 98: togglePartition(device)
            case 99: step("time jumps\(scheduler.waiting.contains { $0.hasSuffix(" compaction") } ? " with a compaction queued" : "")") { time.advance(by: UInt64.random(in: 1...600_000, using: &random)) }
            case 110: convertToSealed()
            default: runBackgroundWork()
            }
        }
    }

    /// Heals every partition, starts every device, and delivers and refreshes
    /// until all have read the same files; returns each device's store.
    func finish() throws -> [String: [StoreKey: PropertyListValue]] {
        let skews = devices.map(\.skew)
        let spread = UInt64(skews.max()! - skews.min()!)
        if spread > HybridLogicalClock.maximumOffset {
            step("time passes until every clock is within the maximum offset of every stamp") { time.advance(by: spread) }
        }
        synchronizer?.partitioned = []
        for device in active where !device.isRunning { try device.start() }
        for device in active { _ = device.store?.signAppends(waiting: true) }  // what the schedule left unsigned
        for _ in 0..<2 {
            synchronizer?.deliverAll()
            for device in devices { device.store?.refresh() }
            for device in devices { device.publishProgress() }
        }
        return Dictionary(uniqueKeysWithValues: active.map { ($0.name, $0.store?.values ?? [:]) })
    }

    /// Stops and starts every device: each reads its store again from the files alone.
    func restartAll() throws -> [String: [StoreKey: PropertyListValue]] {
        for device in devices { device.stop() }
        for device in active { try device.start() }
        return Dictionary(uniqueKeysWithValues: active.map { ($0.name, $0.store?.values ?? [:]) })
    }

    /// What device `name`'s store says is wrong (its status's warnings), for a failure's report.
    func warnings(of name: String) -> [String] {
        devices.first { $0.name == name }?.store?.status().warnings.map { "\($0.kind): \($0.message)" } ?? []
    }

    /// The devices not retired.
    private var active: [SimulatedDevice] { devices.filter { !$0.isRetired } }

    /// Closes every store.
    func stop() { for device in devices { device.stop() } }

    // MARK: Steps

    private func step(_ description: String, _ action: () throws -> Void) {
        trace.append(description)
        do { try action() } catch { trace.append("  → \(error)") }
    }

    private func write(on device: SimulatedDevice) {
        guard let store = device.store else { return }
        let key = random.pick(Self.keys), other = random.pick(Self.keys)
        switch random.next() % 10 {
        case 8...9 where bigWrites:
            let value = random.pick(Self.bigValues)
            step("\(device.name) sets \(key) to \(FileForm.encode(value).count) bytes") { try store.set(value, forKey: key) }
        case 0..<3:
            let value = PropertyListValue.integer(Int64.random(in: 0...99, using: &random))
            step("\(device.name) sets \(key) = \(value)") { try store.set(value, forKey: key) }
        case 3:
            let text = "text \(random.next() % 100)\n"
            step("\(device.name) writes \(key) ← \(text.debugDescription)") { try store.setFileContent(Array(text.utf8), forKey: key) }
        case 4..<6:
            step("\(device.name) removes \(key)") { try store.removeValue(forKey: key) }
        case 6..<8:
            let replace = random.chance(0.7)
            step("\(device.name) renames \(key) → \(other)\(replace ? "" : " (no replace)")") {
                try store.rename(key, to: other, replace: replace)
            }
        default:
            let value = PropertyListValue.string("s\(random.next() % 1000)")
            step("\(device.name) sets \(key) = \(value)") { try store.set(value, forKey: key) }
        }
    }

    /// A plain store is sealed (`kvfs seal`, and every device joined): each running device converts as it
    /// opens again, its plain records sealed by a compaction, a compaction queued before running as it closes.
    private func convertToSealed() {
        guard !sealed else { return }
        let queued = scheduler.waiting.contains { $0.hasSuffix(" compaction") } ? " with a compaction queued" : ""
        step("the store is sealed\(queued): every running device opens again and converts") {
            for path in Set(devices.map(\.syncDirectory.path)) { TestSealing.seal(path) }
            sealed = true
            for device in active where device.isRunning {
                device.stop()
                try device.start()
            }
        }
    }

    /// One piece of a device's background work runs: a compaction a write made due, a tick, a prompt publication.
    private func runBackgroundWork() {
        trace.append(scheduler.runOne(using: &random).map { "\($0) runs" } ?? "no background work waits")
    }

    private func refresh(_ device: SimulatedDevice) {
        step("\(device.name) refreshes") { device.store?.refresh() }
    }

    private func deliver(orRefresh device: SimulatedDevice) {
        guard let synchronizer else { return refresh(device) }
        trace.append(synchronizer.deliverOne(using: &random))
    }

    private func restart(_ device: SimulatedDevice) {
        let queued = scheduler.waiting.contains("\(device.name) compaction") ? " with its compaction queued (run as it closes)" : ""
        step("\(device.name) restarts\(queued)") {
            device.stop()
            try device.start()
        }
    }

    /// `device`'s process is killed with work queued (a compaction a write made due, a tick): the work is lost,
    /// and the device starts again from its files. (Its store then closes, as no killed process does: the
    /// crash tests and `mount-scripts/soak.sh --processes` kill for real.)
    private func killQueuedWork(of device: SimulatedDevice) {
        guard device.isRunning else { return }
        let dropped = scheduler.discard(of: device.name).filter { !$0.hasSuffix(" tick") }
        step("\(device.name) is killed\(dropped.isEmpty ? "" : " with \(dropped.joined(separator: ", ")) queued") and starts again") {
            device.stop()
            try device.start()
        }
    }

    private func toggleRunning(_ device: SimulatedDevice) {
        if device.isRunning {
            step("\(device.name) goes away") { device.stop() }
        } else {
            step("\(device.name) comes back") { try device.start() }
        }
    }

    /// `device` retires another one, which has stopped for good, once that
    /// one's folder has fully arrived on its replica (as `kvfs retire` asks).
    /// One `kvfs retire` refuses (it looks alive) stays a device, which comes back.
    private func retireAnother(from device: SimulatedDevice) {
        guard let store = device.store, active.count > 2,
              let other = active.filter({ $0 !== device && $0.id != nil }).randomElement(using: &random), let id = other.id
        else { return }
        step("\(device.name) retires \(other.name)") {
            other.stop()
            synchronizer?.deliverAll(of: id)
            _ = try store.retire(id)
            other.isRetired = true  // once retired: a refused retirement leaves it a device, stopped, that comes back
            if let index = devices.firstIndex(where: { $0 === device }) { synchronizer?.carryFolder(of: id, from: index) }
        }
    }

    /// `device`'s folder vanishes: on one other replica for a moment (the
    /// synchronizer brings it back), or by mistake everywhere while the
    /// device is stopped, once the devices that run have read it all. Either
    /// way nothing may be lost.
    private func vanish(_ device: SimulatedDevice) {
        guard let id = device.id, let index = devices.firstIndex(where: { $0 === device }) else { return }
        let running = active.filter { $0.isRunning && $0 !== device }
        if let synchronizer, device.isRunning || random.chance(0.5) {
            guard let replica = synchronizer.replicas.indices.filter({ $0 != index }).randomElement(using: &random) else { return }
            step("\(device.name)'s folder vanishes from replica \(replica) for a moment") {
                synchronizer.removeFolder(of: id, in: replica)
                devices[replica].store?.refresh()
            }
        } else if !device.isRunning, !running.isEmpty {
            step("\(device.name)'s folder is removed by mistake while it is stopped") {
                synchronizer?.deliverAll(of: id)
                for other in running { other.store?.refresh() }
                if let synchronizer {
                    for replica in synchronizer.replicas.indices { synchronizer.removeFolder(of: id, in: replica) }
                } else {
                    try? FileManager.default.removeItem(atPath: device.syncDirectory.path + "/devices/" + id.hex)
                }
                for other in running { other.store?.refresh() }
            }
        }
    }

    private func togglePartition(_ device: SimulatedDevice) {
        guard let synchronizer, let index = devices.firstIndex(where: { $0 === device }) else { return }
        if synchronizer.partitioned.remove(index) == nil {
            synchronizer.partitioned.insert(index)
            trace.append("\(device.name)'s replica is cut off")
        } else {
            trace.append("\(device.name)'s replica is back")
        }
    }
}
