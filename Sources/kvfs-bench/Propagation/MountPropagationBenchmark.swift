import Foundation
import LinuxSystem
import SystemPackage
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kvfs-bench mounts`: how soon a value written in one kvfs mount reads back
/// from another, the two folders kept by a Syncthing pair on 127.0.0.1 —
/// without and with `kvfs mount --syncthing`, idle and under load, the store
/// plain or sealed (docs/sealed.md).
enum MountPropagationBenchmark: Benchmark {
    static let name = "mounts"
    static let usage = "mounts [--writes 100] [--load-interval 0.1] [--integration both|on|off] [--load both|on|off] [--sealed both|on|off] [--dir DIR]"
    static let summary = """
        mount A writes a file, mount B reads it back (polled every ms); Syncthing pair on 127.0.0.1; with and \
        without --syncthing, idle and with both mounts writing other keys every --load-interval seconds; the store \
        plain, sealed, or both in turn (--sealed)
        """

    static func run(_ options: Options) throws {
        let writes = try options.value("writes", default: 100)
        let loadInterval = try options.value("load-interval", default: 0.1)
        let base = try options.value("dir", default: NSTemporaryDirectory())
        let integrations = try choices(options.value("integration", default: "both"))
        let loads = try choices(options.value("load", default: "both"))
        let sealings = try choices(options.value("sealed", default: "off")).map { $0 ? Sealing.sealed : .plain }
        if let missing = SyncthingPair.missingProgram { throw OptionError(message: "\(missing) is not installed") }
        guard access(MountPair.kvfs, X_OK) == 0 else { throw OptionError(message: "\(MountPair.kvfs) is missing: swift build first") }
        print("mounts: A writes a file, B reads the value back; folders kept by Syncthing (watcher delay 1 s) under \(base)")
        print("load: both mounts write a key of their own every \(loadInterval) s; the machine may be shared")
        printRow("kvfs --syncthing", "load", "store", "writes", "p50", "p99", "max")
        for integration in integrations {
            for load in loads {
                for sealing in sealings {
                    let root = base + "/kvfs-bench-\(UUID().uuidString.prefix(8))"
                    defer { _ = try? ChildProcess.run("rm", ["-rf", root]) }
                    let latencies = try measure(root: root, writes: writes, integration: integration,
                                                loadInterval: load ? loadInterval : nil, sealing: sealing)
                    printRow(integration ? "on" : "off", load ? "every \(loadInterval) s, both sides" : "idle", sealing.rawValue,
                             "\(latencies.samples.count)", Latencies.format(latencies.median),
                             Latencies.format(latencies.percentile(0.99)), Latencies.format(latencies.maximum))
                }
            }
        }
    }

    static func choices(_ text: String) throws -> [Bool] {
        switch text {
        case "both": [false, true]
        case "on": [true]
        case "off": [false]
        default: throw OptionError(message: "\(text): not both, on or off")
        }
    }

    /// One configuration: a fresh pair, two mounts, `writes` probes.
    private static func measure(root: String, writes: Int, integration: Bool, loadInterval: TimeInterval?,
                                sealing: Sealing) throws -> Latencies {
        let pair = try MountPair(root: root, transport: .syncthing(integration: integration), sealing: sealing)
        defer { pair.stop() }
        let mounts = pair.mounts
        let load = loadInterval.map { LoadWriter.both(of: pair, interval: $0) }
        defer { load?.forEach { $0.stop() } }
        var latencies = Latencies()
        for index in 1...writes {
            // Pauses longer than Syncthing's 250 ms between two index messages (and, without the
            // integration, than its 1 s watcher delay) let each probe go in a message of its own.
            Thread.sleep(forTimeInterval: integration ? Double.random(in: 0.3..<0.6) : Double.random(in: 1.2..<1.5))
            let value = "probe \(index)\n"
            let written = Date()
            try write(value, to: mounts[0] + "/probe")
            while (try? String(contentsOfFile: mounts[1] + "/probe", encoding: .utf8)) != value {
                guard Date().timeIntervalSince(written) < 30 else { throw OptionError(message: "probe \(index) did not arrive within 30 s") }
                usleep(1000)
            }
            latencies.add(Date().timeIntervalSince(written))
        }
        return latencies
    }

    /// Writes `value` to `path` with open/write/close (the commit is close()).
    static func write(_ value: String, to path: String) throws {
        let file = try SystemCallError.naming("open", path) {
            try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite, .groupRead, .otherRead])
        }
        do {
            try file.write(all: value.utf8)
        } catch {
            try? file.close()
            throw error
        }
        try SystemCallError.naming("close", path) { try file.close() }
    }

    private static func printRow(_ columns: String...) {
        let widths = [18, 28, 8, 8, 10, 10, 10]
        print(zip(columns, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined())
    }
}

/// A thread writing a counter to one file every `interval` seconds until stopped: the load.
final class LoadWriter: @unchecked Sendable {
    private let stopped = NSLock()
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init(file: String, interval: TimeInterval) {
        Thread.detachNewThread { [self] in
            var count = 0
            while stopped.withLock({ running }) {
                count += 1
                try? MountPropagationBenchmark.write("\(count)\n", to: file)
                Thread.sleep(forTimeInterval: interval)
            }
            done.signal()
        }
    }

    /// One on each mount of `pair`, each writing a key of its own.
    static func both(of pair: MountPair, interval: TimeInterval) -> [LoadWriter] {
        zip(pair.mounts, ["a", "b"]).map { LoadWriter(file: $0 + "/load-" + $1, interval: interval) }
    }

    /// Stops writing, and waits for the last write to end.
    func stop() {
        stopped.withLock { running = false }
        done.wait()
    }
}
