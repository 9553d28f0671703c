import Foundation
import KVStore
import TestSupport

/// `kvfs-bench propagation`: how soon a write on one device is noticed on another.
enum PropagationBenchmark: Benchmark {
    static let name = "propagation"
    static let usage = "propagation [--writes 200] [--polling] [--poll-interval 1] [--syncthing-writes 20] [--dir DIR]"
    static let summary = """
        device A writes, device B (DeviceStore + SyncWatcher) notices; p50/p99/max on one shared folder \
        (inotify, or --polling), and through a Syncthing pair on 127.0.0.1 (0 writes skips it)
        """

    static func run(_ options: Options) throws {
        let writes = try options.value("writes", default: 200)
        let interval = try options.value("poll-interval", default: 1.0)
        let syncthingWrites = try options.value("syncthing-writes", default: 20)
        let base = try options.value("dir", default: NSTemporaryDirectory())
        let root = base + "/kvfs-bench-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        print("propagation: device A writes, device B notices (its change observer fires); folders under \(base)")
        printRow("folder", "B notices by", "writes", "p50", "p99", "max")
        if options.flag("polling") {
            let latencies = try sharedFolder(root + "/polling", writes: writes, pollInterval: interval, polling: true)
            printRow("one shared folder", "polling every \(interval) s", latencies)
        } else {
            let latencies = try sharedFolder(root + "/inotify", writes: writes, pollInterval: 3600, polling: false)
            printRow("one shared folder", "inotify", latencies)
        }
        guard syncthingWrites > 0 else { return }
        if let missing = SyncthingPair.missingProgram {
            print("(Syncthing rows skipped: \(missing) is not installed)")
            return
        }
        for trigger in [false, true] {
            let latencies = try syncthing(root + "/syncthing-\(trigger)", writes: syncthingWrites, scanTrigger: trigger)
            printRow("Syncthing pair, loopback", trigger ? "inotify, REST scan" : "inotify, st watcher 1 s", latencies)
        }
    }

    /// A and B on one folder.
    private static func sharedFolder(_ root: String, writes: Int, pollInterval: TimeInterval, polling: Bool) throws -> Latencies {
        let sync = URL(fileURLWithPath: root + "/sync")
        let probe = PropagationProbe(writer: try open(sync, state: root + "/state-a", name: "a"),
                                     reader: try open(sync, state: root + "/state-b", name: "b"),
                                     pollInterval: pollInterval, polling: polling)
        defer { probe.close() }
        // With polling, writes fall at random points of the poll period.
        return try probe.measure(count: writes) { polling ? Double.random(in: 0..<pollInterval) : Double.random(in: 0.002..<0.01) }
    }

    /// A on one folder, B on a copy Syncthing keeps; with `scanTrigger`, A's side is told to scan right after each write.
    private static func syncthing(_ root: String, writes: Int, scanTrigger: Bool) throws -> Latencies {
        let folders = [root + "/A", root + "/B"]
        let pair = try SyncthingPair(work: root + "/syncthing", folders: folders)
        defer { pair.stop() }
        let writer = try open(URL(fileURLWithPath: folders[0]), state: root + "/state-a", name: "a")
        try pair.scan(0)
        try waitUntil(seconds: 30, "store-id in the second folder") { FileManager.default.fileExists(atPath: folders[1] + "/store-id") }
        let reader = try open(URL(fileURLWithPath: folders[1]), state: root + "/state-b", name: "b")
        let probe = PropagationProbe(writer: writer, reader: reader, pollInterval: 3600, polling: false)
        defer { probe.close() }
        let folder = "devices/" + writer.deviceID.hex
        // Pauses longer than the watcher's 1 s delay let each write start a batch of its own (and Syncthing
        // answers writes closer together more slowly: about 50 ms after a scan rather than 15).
        return try probe.measure(count: writes, pause: { 1.5 }, afterWrite: { if scanTrigger { try pair.scan(0, path: folder) } })
    }

    private static func open(_ sync: URL, state: String, name: String) throws -> DeviceStore {
        try DeviceStore(syncDirectory: sync, stateDirectory: URL(fileURLWithPath: state), deviceName: name)
    }

    private static func printRow(_ folder: String, _ how: String, _ latencies: Latencies) {
        printRow(folder, how, "\(latencies.samples.count)", Latencies.format(latencies.median),
                 Latencies.format(latencies.percentile(0.99)), Latencies.format(latencies.maximum))
    }

    private static func printRow(_ columns: String...) {
        let widths = [26, 26, 7, 10, 10, 10]
        print(zip(columns, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined())
    }
}
