import Foundation

/// The seed of a test that draws random inputs: `KVFS_SEED` when the environment gives it (a replay),
/// else a new one. Either way it is printed with the command that replays it, so that a failure seen
/// once can be run again exactly.
public enum TestSeed {
    /// A seed below `bound` for the test `name`, printed as `name: seed N (replay: KVFS_SEED=N swift test --filter name)`.
    public static func draw(_ name: String, below bound: UInt64 = .max) -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["KVFS_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0..<bound)
        print("\(name): seed \(seed) (replay: KVFS_SEED=\(seed) swift test --filter \(name))")
        return seed
    }
}
