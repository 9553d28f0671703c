import Foundation
import KVStore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kvfs-bench history-writes`: whether a write's cost grows with history
/// (issue 23 item 6). Small integers written over a few keys with the
/// default retention (30 days, 8 MiB), so that history keeps every version
/// until the budget is full (about 110,000 of them) and then drops the
/// oldest at each write: in ``InMemoryKeyValueStore``, through the library
/// on disk (``DeviceStore``), and through a mount (an open, write and close
/// of the key's file). Each figure is taken from the writes just before
/// 1k, 10k, 100k and 200k versions: their mean (a compaction's cost spread
/// over the writes) and their median (a write's own).
enum HistoryWritesBenchmark: Benchmark {
    static let name = "history-writes"
    static let usage = "history-writes [--writes 200000] [--keys 50] [--only memory|disk|mount] [--dir DIR]"
    static let summary = "time per write with a history of 1k, 10k, 100k and 200k versions: in memory, through the library on disk, through a mount"

    /// Where a figure is taken: after this many versions.
    static let checkpoints = [1_000, 10_000, 100_000, 200_000]

    static func run(_ options: Options) throws {
        let writes = try options.value("writes", default: 200_000)
        let keys = try options.value("keys", default: 50)
        let only = try options.value("only", default: "")
        let base = try options.value("dir", default: NSTemporaryDirectory())
        guard writes > 0, keys > 0, ["", "memory", "disk", "mount"].contains(only) else {
            throw OptionError(message: "usage: kvfs-bench \(usage)")
        }
        let root = URL(fileURLWithPath: base).appendingPathComponent("kvfs-bench-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { _ = try? ChildProcess.run("rm", ["-rf", root]) }
        let points = checkpoints.filter { $0 <= writes }
        print("history-writes: \(writes) writes of small integers over \(keys) keys, default retention; "
              + "µs per write, mean (median), of the writes just before \(points.map(label).joined(separator: ", ")) versions; load \(loadAverage())")
        if only.isEmpty || only == "memory" {
            let store = InMemoryKeyValueStore()
            report("in memory (InMemoryKeyValueStore)", try timed(writes, points) { try store.setValue(.integer(Int64($0)), forKey: "key-\($0 % keys)") })
        }
        if only.isEmpty || only == "disk" {
            let store = try DeviceStore(syncDirectory: URL(fileURLWithPath: root + "/disk-sync"),
                                        stateDirectory: URL(fileURLWithPath: root + "/disk-state"), deviceName: "bench", warn: { _ in })
            defer { store.close() }
            report("library on disk (DeviceStore)", try timed(writes, points) { try store.set(.integer(Int64($0)), forKey: "key-\($0 % keys)") })
        }
        if only.isEmpty || only == "mount" {
            let mount = root + "/mount"
            try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
            let mounted = try ChildProcess.run(MountPair.kvfs, ["mount", mount, "--sync-dir", root + "/mount-sync", "--state-dir", root + "/mount-state"])
            guard mounted.status == 0 else { throw ChildProcessError.failed("kvfs mount", mounted.output) }
            defer { _ = try? ChildProcess.run(MountPair.kvfs, ["unmount", mount]) }
            report("through a mount (open, write, close)", try timed(writes, points) { try writeFile(mount + "/key-\($0 % keys)", "\($0)\n") })
        }
        print("load at end \(loadAverage())")
    }

    /// Runs `write` for 0..<writes; of the writes just before each of
    /// `points`, the mean seconds per write (the cost with compactions
    /// amortized) and the median (a write's own cost).
    private static func timed(_ writes: Int, _ points: [Int], _ write: (Int) throws -> Void) throws -> [(Int, mean: Double, median: Double)] {
        var figures: [(Int, mean: Double, median: Double)] = []
        var window: [Double] = []
        for index in 0..<writes {
            let started = DispatchTime.now()
            try write(index)
            let done = index + 1
            guard let point = points.first(where: { done <= $0 }), done > point - Self.window(before: point) else { continue }
            window.append(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
            if done == point {
                figures.append((point, window.reduce(0, +) / Double(window.count), window.sorted()[window.count / 2]))
                window = []
            }
        }
        return figures
    }

    /// How many writes before a checkpoint its figures are taken from.
    private static func window(before point: Int) -> Int { min(5_000, point / 2) }

    private static func report(_ how: String, _ figures: [(Int, mean: Double, median: Double)]) {
        let cells = figures.map { "\(label($0.0)): \(String(format: "%.1f (%.1f)", $0.mean * 1e6, $0.median * 1e6))" }
        print(how.padding(toLength: 40, withPad: " ", startingAt: 0) + cells.joined(separator: "   "))
    }

    private static func label(_ count: Int) -> String { count % 1000 == 0 ? "\(count / 1000)k" : "\(count)" }

    /// Writes `text` as the whole content of the file at `path`, as `echo TEXT > PATH` does.
    private static func writeFile(_ path: String, _ text: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw OptionError(message: "\(path): \(String(cString: strerror(errno)))") }
        let written = text.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        let closed = close(descriptor)
        guard written == text.utf8.count, closed == 0 else { throw OptionError(message: "\(path): \(String(cString: strerror(errno)))") }
    }
}
