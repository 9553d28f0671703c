import Foundation
import Testing
@testable import KVStore

/// The convergence proof, by sampling: many seeded random schedules, each
/// ending with every device showing the same store as every other, as the
/// reference model, and as itself after a restart.
///
/// `KVFS_SEED=<n> KVFS_CLOCK_SPREAD=<ms>` replays one schedule (the failure report names it);
/// `KVFS_SCHEDULES=<n>` runs more (or fewer) than the 1,000 of CI.
@Suite("Convergence of random schedules")
struct ConvergenceTests {
    static let batches = 20
    static var schedules: Int { ProcessInfo.processInfo.environment["KVFS_SCHEDULES"].flatMap(Int.init) ?? 1000 }

    @Test("random schedules converge to the reference model", arguments: 0..<batches)
    func schedules(batch: Int) throws {
        let seeds: [UInt64] = if let seed = ProcessInfo.processInfo.environment["KVFS_SEED"].flatMap(UInt64.init) {
            batch == 0 ? [seed] : []
        } else {
            (0..<Self.schedules).filter { $0 % Self.batches == batch }.map { 0x6B76_6673_0000 + UInt64($0) }
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
            try check(seed: 0x6B76_6673_4000 + UInt64(index), clockSpread: 3 * 86_400_000)
        }
    }

    private func check(seed: UInt64, clockSpread: Int64) throws {
        let root = TemporaryFolder("kvfs-sync", inMemory: true)  // the schedules fsync a lot
        defer { root.cleanup() }
        let cluster = try SimulatedCluster(seed: seed, root: root.path, clockSpread: clockSpread)
        defer { cluster.stop() }
        var random = SeededRandom(seed: ~seed)
        cluster.run(steps: Int.random(in: 20...120, using: &random))
        let expected = cluster.model.values()
        let stores = try cluster.finish()
        let afterRestart = try cluster.restartAll()
        for (name, store) in stores.sorted(by: { $0.key < $1.key }) where store != expected || afterRestart[name] != expected {
            Issue.record("""
                seed \(seed) (replay with KVFS_SEED=\(seed) KVFS_CLOCK_SPREAD=\(clockSpread)): \(name) differs from the reference model
                  expected:      \(describe(expected))
                  got:           \(describe(store))
                  after restart: \(describe(afterRestart[name] ?? [:]))
                  \(cluster.model.count) records written; last steps:
                  \(cluster.trace.suffix(40).joined(separator: "\n      "))
                """)
            return
        }
    }

    private func describe(_ store: [String: PropertyListValue]) -> String {
        store.sorted { $0.key < $1.key }.map { key, value in
            if case let .data(data) = value { return "\(key)=<\(data.count) bytes>" }
            return "\(key)=\(value)"
        }.joined(separator: " ")
    }
}
