import Foundation
import Testing
import TestSupport

/// Issue 26 item 5: what sealing costs, the same store plain and sealed in one
/// run, is measured by `kvfs-bench sealed` (Sources/kvfs-bench/Sealed/): its
/// long form, from the release build, is `KVFS_BENCH_ONLY=sealed
/// mount-scripts/benchmark.sh` (docs/performance.md). This runs the same code
/// on a small store, checking that every figure comes out; the benchmark fails
/// by itself when a store, plain or sealed, does not hold what was written or
/// refuses a record. Speed is reported, never asserted.
@Suite("Sealed costs (kvfs-bench sealed)", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct SealedCostTests {
    @Test("kvfs-bench sealed on a small store: every figure comes out, and the stores hold what was written")
    func smallRun() throws {
        try MountEnvironment.requireBinary()
        let bench = MountEnvironment.productsDirectory.appendingPathComponent("kvfs-bench").path
        guard access(bench, X_OK) == 0 else { throw MountEnvironment.MissingBinary(path: bench, build: "swift build --build-tests") }
        let folder = TemporaryFolder("sealed-cost")
        defer { folder.cleanup() }
        let result = try ChildProcess.run(bench, ["sealed", "--writes", "300", "--records", "3000", "--keys", "100", "--rounds", "2",
                                                  "--dir", folder.path])
        print(result.output)
        #expect(result.status == 0)
        let figures = [
            #/^sealed: 300 writes of 100 bytes over 100 keys in 10 rounds of each store in turn: plain [0-9.]+ µs, sealed [0-9.]+ µs a write \(medians of the rounds\); the rounds' median ratio [0-9.]+x \(from [0-9.]+x to [0-9.]+x\)$/#,
            #/^sealed: compactions during the writes: plain 0, sealed 0$/#,
            #/^sealed: 300 reads: plain [0-9.]+ µs, sealed [0-9.]+ µs a read \([0-9.]+x\)$/#,
            #/^sealed: an Ed25519 signature alone: [0-9.]+ µs, which a sealed write would add if it signed its own record$/#,
            #/^sealed: a write's record framed alone: plain [0-9.]+ µs, sealed [0-9.]+ µs \(padded, its nonce's MAC, ChaCha20-Poly1305, its chain's hash\)$/#,
            #/^sealed: the other device's journal, 3000 writes .* written in plain [0-9.]+ s, sealed [0-9.]+ s; its folder plain [0-9.]+ MB, sealed [0-9.]+ MB$/#,
            #/^sealed: opening the store .*: plain [0-9.]+ s, sealed [0-9.]+ s \([0-9.]+x\); sealed checking each signature .* [0-9.]+ s$/#,
            #/^sealed: round 1, mounting it .*: plain [0-9.]+ s, sealed [0-9.]+ s \([0-9.]+x\); kvfs mount returned after [0-9.]+ s, [0-9.]+ s$/#,
            #/^sealed: round 2, mounting it /#,
        ]
        let lines = result.output.split(separator: "\n").map(String.init)
        for figure in figures { #expect(lines.contains { $0.contains(figure) }) }
        #expect(!result.output.contains("warned"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test("--compaction-floor sets both stores' floor: 300 writes (some 45 KB of records) compact under a floor of 1 byte, and not under the default 1 MiB (smallRun)")
    func compactionFloor() throws {
        try MountEnvironment.requireBinary()
        let bench = MountEnvironment.productsDirectory.appendingPathComponent("kvfs-bench").path
        let folder = TemporaryFolder("sealed-cost-floor")
        defer { folder.cleanup() }
        let result = try ChildProcess.run(bench, ["sealed", "--writes", "300", "--compaction-floor", "1", "--records", "10", "--keys", "100",
                                                  "--dir", folder.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("in 10 rounds of each store in turn, compaction floor 1 bytes: plain "))
        let line = try #require(result.output.firstMatch(of: #/compactions during the writes: plain (\d+), sealed (\d+)/#))
        #expect(Int(line.1)! > 0 && Int(line.2)! > 0, "\(line.0)")
        #expect(try ChildProcess.run(bench, ["sealed", "--writes", "300", "--compaction-floor", "0"]).status != 0, "a floor of 0 is refused")
    }
}
