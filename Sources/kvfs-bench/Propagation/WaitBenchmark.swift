import Foundation
import TestSupport

/// `kvfs-bench wait`: how long `kvfs set k v && kvfs wait k` takes on mount A,
/// that is until mount B has read the value and said so in its progress —
/// two mounts on one shared folder, and on a Syncthing pair with
/// `kvfs mount --syncthing`, idle and under load.
enum WaitBenchmark: Benchmark {
    static let name = "wait"
    static let usage = "wait [--writes 50] [--load-interval 0.1] [--folder both|shared|syncthing] [--load both|on|off] [--dir DIR]"
    static let summary = """
        on mount A, `kvfs set probe v && kvfs wait probe` (two processes, timed together) until mount B has read \
        the value: two mounts on one shared folder, and a Syncthing pair on 127.0.0.1 with --syncthing; idle and \
        with both mounts writing a key of their own every --load-interval seconds
        """

    static func run(_ options: Options) throws {
        let writes = try options.value("writes", default: 50)
        let loadInterval = try options.value("load-interval", default: 0.1)
        let base = try options.value("dir", default: NSTemporaryDirectory())
        let loads = try MountPropagationBenchmark.choices(options.value("load", default: "both"))
        let folders: [(name: String, transport: MountPair.Transport)] = switch try options.value("folder", default: "both") {
        case "both": [("one shared folder", .sharedFolder), ("Syncthing, --syncthing", .syncthing(integration: true))]
        case "shared": [("one shared folder", .sharedFolder)]
        case "syncthing": [("Syncthing, --syncthing", .syncthing(integration: true))]
        case let other: throw OptionError(message: "--folder \(other): not both, shared or syncthing")
        }
        guard access(MountPair.kvfs, X_OK) == 0 else { throw OptionError(message: "\(MountPair.kvfs) is missing: swift build first") }
        if folders.count > 1 || folders.first?.name != "one shared folder", let missing = SyncthingPair.missingProgram {
            throw OptionError(message: "\(missing) is not installed (--folder shared needs no Syncthing)")
        }
        print("wait: on mount A, `kvfs set probe v && kvfs wait probe` until mount B has read it; folders under \(base)")
        print("load: both mounts write a key of their own every \(loadInterval) s; the machine may be shared")
        printRow("folder", "load", "writes", "p50", "p99", "max", "set alone p50")
        for folder in folders {
            for load in loads {
                let root = base + "/kvfs-bench-\(UUID().uuidString.prefix(8))"
                defer { _ = try? ChildProcess.run("rm", ["-rf", root]) }
                let (total, set) = try measure(root: root, transport: folder.transport, writes: writes, loadInterval: load ? loadInterval : nil)
                printRow(folder.name, load ? "every \(loadInterval) s, both sides" : "idle", "\(total.samples.count)",
                         Latencies.format(total.median), Latencies.format(total.percentile(0.99)), Latencies.format(total.maximum),
                         Latencies.format(set.median))
            }
        }
    }

    /// One configuration: a fresh pair of mounts, `writes` probes; the times of
    /// `kvfs set && kvfs wait`, and of `kvfs set` alone.
    private static func measure(root: String, transport: MountPair.Transport, writes: Int,
                                loadInterval: TimeInterval?) throws -> (total: Latencies, set: Latencies) {
        let pair = try MountPair(root: root, transport: transport)
        defer { pair.stop() }
        let load = loadInterval.map { LoadWriter.both(of: pair, interval: $0) }
        defer { load?.forEach { $0.stop() } }
        var (total, set) = (Latencies(), Latencies())
        for index in 1...writes {
            // Longer than Syncthing's 250 ms between two index messages, so that each probe goes in a message of its own.
            Thread.sleep(forTimeInterval: Double.random(in: 0.3..<0.6))
            let started = Date()
            try kvfs(["set", "probe", "probe \(index)"] + pair.storeOptions(0))
            let written = Date()
            try kvfs(["wait", "probe", "--timeout", "30"] + pair.storeOptions(0))
            total.add(Date().timeIntervalSince(started))
            set.add(written.timeIntervalSince(started))
        }
        return (total, set)
    }

    private static func kvfs(_ arguments: [String]) throws {
        let result = try ChildProcess.run(MountPair.kvfs, arguments)
        guard result.status == 0 else { throw ChildProcessError.failed("kvfs \(arguments[0])", result.output) }
    }

    private static func printRow(_ columns: String...) {
        let widths = [24, 28, 8, 10, 10, 10, 14]
        print(zip(columns, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined())
    }
}
