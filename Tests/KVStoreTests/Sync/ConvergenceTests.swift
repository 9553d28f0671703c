import Foundation
import Testing
@testable import KVStore

/// The convergence proof, by sampling: many seeded random schedules, each
/// ending with every device showing the same store as every other, as the
/// reference model, and as itself after a restart.
///
/// `KVFS_SEED=<n> KVFS_CLOCK_SPREAD=<ms>` replays one schedule, in any
/// process (the failure report names it, and a replay reports every step);
/// `KVFS_SCHEDULES=<n>` runs more (or fewer) than the 1,000 of CI, and
/// `KVFS_SEED_BASE=<n>` other seeds than CI's (from n on: `mount-scripts/soak.sh`).
@Suite("Convergence of random schedules")
struct ConvergenceTests {
    static let batches = 20
    static var schedules: Int { ProcessInfo.processInfo.environment["KVFS_SCHEDULES"].flatMap(Int.init) ?? 1000 }
    /// The first of CI's seeds.
    static let ciSeedBase: UInt64 = 0x6B76_6673_0000
    static var seedBase: UInt64 { ProcessInfo.processInfo.environment["KVFS_SEED_BASE"].flatMap(UInt64.init) ?? ciSeedBase }

    @Test("random schedules converge to the reference model", arguments: 0..<batches)
    func schedules(batch: Int) throws {
        let seeds: [UInt64] = if let seed = ProcessInfo.processInfo.environment["KVFS_SEED"].flatMap(UInt64.init) {
            batch == 0 ? [seed] : []
        } else {
            (0..<Self.schedules).filter { $0 % Self.batches == batch }.map { Self.seedBase + UInt64($0) }
        }
        let spread = ProcessInfo.processInfo.environment["KVFS_CLOCK_SPREAD"].flatMap(Int64.init) ?? 3_600_000
        for seed in seeds { try check(seed: seed, clockSpread: spread) }
    }

    /// Clocks up to three days apart: records past the maximum offset are held
    /// back (HorizonTests), and every device still ends with the model's store.
    @Test("random schedules with clocks days apart converge once the clocks catch up", arguments: 0..<batches)
    func schedulesWithClocksDaysApart(batch: Int) throws {
        guard ProcessInfo.processInfo.environment["KVFS_SEED"] == nil else { return }  // the test above replays
        for index in stride(from: batch, to: Self.schedules / 5, by: Self.batches) {
            try check(seed: Self.seedBase + 0x4000 + UInt64(index), clockSpread: 3 * 86_400_000)
        }
    }

    @Test("a seed replays the same schedule in other processes: no choice depends on the process")
    func aSeedReplaysTheSameScheduleInAnotherProcess() async throws {
        let seed: UInt64 = Self.replayedSeed
        let here = try Self.schedule(seed: seed)
        #expect(here.contains { $0.contains(" reaches replica ") }, "the schedule delivers no file piece by piece: pick another seed")
        for run in 1...2 {
            let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) { [seed = seed as UInt64] in
                for line in try ConvergenceTests.schedule(seed: seed) { print("schedule: " + line) }
            }
            let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
            let there = output.split(separator: "\n").filter { $0.hasPrefix("schedule: ") }.map { String($0.dropFirst(10)) }
            let difference = here.indices.first { $0 >= there.count || here[$0] != there[$0] }
                .map { "line \($0): \(here[$0]) | \($0 < there.count ? there[$0] : "nothing")" }
                ?? (there.count == here.count ? nil : "\(there.count) lines, not \(here.count)")
            #expect(difference == nil, "process \(run) took another schedule for seed \(seed): \(difference ?? "")")
        }
    }

    /// The moments that went wrong before, or could, are among CI's schedules: a compaction a write queued
    /// and the seed ran later, a process killed with one queued, a restart while one waits (it runs as the
    /// store closes), a sealed store's marks signed as background work, and a clock jump with a compaction waiting.
    @Test("the schedules reach the dangerous moments: background work waiting across kills, restarts, clock jumps and sealed marks; a snapshot delivered before and after the segment it replaces")
    func dangerousMomentsAreReached() throws {
        var reached: Set<String> = []
        for index in 0..<40 {
            let lines = try Self.schedule(seed: Self.ciSeedBase + UInt64(index))
            var snapshotsFirst: Set<String> = [], removalsFirst: Set<String> = []  // device and replica
            for line in lines {
                if let delivery = Self.delivery(line) {
                    if delivery.file.hasPrefix("snapshot-") && !delivery.removed {
                        if removalsFirst.contains(delivery.place) { reached.insert("a snapshot delivered after the segment it replaces went") }
                        snapshotsFirst.insert(delivery.place)
                    } else if delivery.file.hasPrefix("journal-") && delivery.removed {
                        if snapshotsFirst.contains(delivery.place) { reached.insert("a snapshot delivered before the segment it replaces went") }
                        removalsFirst.insert(delivery.place)
                    }
                }
                if line.hasPrefix("seed "), line.contains(", sealed") { reached.insert("sealed") }
                if line.hasSuffix(" signing runs") { reached.insert("a mark signed in the background") }
                if line.hasSuffix(" compaction runs") { reached.insert("a compaction run by the seed") }
                if line.contains("is killed with") && line.contains("compaction") { reached.insert("a kill with a compaction queued") }
                if line.contains(" restarts with its compaction queued") { reached.insert("a restart with a compaction queued") }
                if line.hasPrefix("time jumps with a compaction queued") { reached.insert("a clock jump with a compaction queued") }
                if line.hasPrefix("the store is sealed") { reached.insert("a conversion to sealed") }
            }
        }
        let expected: Set = ["sealed", "a mark signed in the background", "a compaction run by the seed", "a kill with a compaction queued",
                             "a restart with a compaction queued", "a clock jump with a compaction queued", "a conversion to sealed",
                             "a snapshot delivered before the segment it replaces went", "a snapshot delivered after the segment it replaces went"]
        #expect(reached == expected, "not reached: \(expected.subtracting(reached).sorted())")
    }

    /// A synchronizer's delivery in a trace (`dev1's snapshot-….snap reaches replica 2: whole`): the file,
    /// the device and replica (`dev1 2`), and whether it was a removal.
    private static func delivery(_ line: String) -> (file: String, place: String, removed: Bool)? {
        guard let apostrophe = line.range(of: "'s "), let reaches = line.range(of: " reaches replica ") else { return nil }
        let replica = line[reaches.upperBound...].prefix { $0 != ":" }
        return (String(line[apostrophe.upperBound..<reaches.lowerBound]), line[..<apostrophe.lowerBound] + " " + replica, line.hasSuffix(": removed"))
    }

    /// A seed whose schedule has several devices on replicas, which the synchronizer delivers to piece by piece.
    static let replayedSeed: UInt64 = 0x6B76_6673_0004

    /// Seed `seed`'s whole schedule (the steps, and the store each device ends with), its folder spelled `ROOT`.
    static func schedule(seed: UInt64) throws -> [String] {
        let root = TemporaryFolder("kvfs-sync", inMemory: true)
        defer { root.cleanup() }
        let cluster = try SimulatedCluster(seed: seed, root: root.path, clockSpread: 3_600_000)
        defer { cluster.stop() }
        cluster.run(steps: 120)
        let stores = try cluster.finish()
        let lines = cluster.trace + stores.sorted { $0.key < $1.key }.map { "\($0.key) ends with \(describe($0.value))" }
        return lines.map { $0.replacingOccurrences(of: root.path, with: "ROOT") }
    }

    private func check(seed: UInt64, clockSpread: Int64) throws {
        let replay = "replay with KVFS_SEED=\(seed) KVFS_CLOCK_SPREAD=\(clockSpread)"
        let root = TemporaryFolder("kvfs-sync", inMemory: true)  // the schedules fsync a lot
        defer { root.cleanup() }
        var cluster: SimulatedCluster?
        defer { cluster?.stop() }
        do {
            let simulated = try SimulatedCluster(seed: seed, root: root.path, clockSpread: clockSpread)
            cluster = simulated
            var random = SeededRandom(seed: ~seed)
            simulated.run(steps: Int.random(in: 20...120, using: &random))
            let expected = simulated.model.values()
            let stores = try simulated.finish()
            let afterRestart = try simulated.restartAll()
            // Replaying one seed, the report has every step.
            let steps = ProcessInfo.processInfo.environment["KVFS_SEED"] == nil ? Array(simulated.trace.suffix(40)) : simulated.trace
            for (name, store) in stores.sorted(by: { $0.key < $1.key }) where store != expected || afterRestart[name] != expected {
                Issue.record("""
                    seed \(seed) (\(replay)): \(name) differs from the reference model
                      expected:      \(Self.describe(expected))
                      got:           \(Self.describe(store))
                      after restart: \(Self.describe(afterRestart[name] ?? [:]))
                      its warnings:  \(simulated.warnings(of: name).joined(separator: "\n                     "))
                      \(simulated.model.count) records written; \(steps.count == simulated.trace.count ? "the" : "last") steps:
                      \(steps.joined(separator: "\n      "))
                    """)
                return
            }
        } catch {
            Issue.record("seed \(seed) (\(replay)): \(error)\n  last steps:\n      \((cluster?.trace.suffix(40) ?? []).joined(separator: "\n      "))")
        }
    }

    private static func describe(_ store: [StoreKey: PropertyListValue]) -> String {
        store.sorted { $0.key < $1.key }.map { key, value in
            if case let .data(data) = value { return "\(key)=<\(data.count) bytes>" }
            return "\(key)=\(value)"
        }.joined(separator: " ")
    }
}
