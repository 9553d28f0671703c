import Foundation
@_spi(Benchmarks) import KVStore
import TestSupport

/// `kvfs-bench sealed`: what sealing a store costs (issue 26 item 5,
/// docs/sealed.md), the same store plain and sealed in one run, each made as
/// kvfs makes it (``CostStore``):
/// - writes and reads through the library (``DeviceStore``), both stores open, `--write-rounds`
///   rounds of writes taken in turn; `--compaction-floor` raises both stores' compaction floor
///   (1 MiB of records), so that a large one measures the writes without the compactions they make due;
/// - a store whose other device's journal holds `--records` records: each
///   written as any write is (appended, sealed and signed by the journal's
///   writer), none compacted away (`compactionFloor`); the time this takes is
///   printed too. Then opened and read through the library, and, sealed,
///   once more checking each signature instead of the last of each read
///   (docs/sealed.md § Checking signatures); and mounted with the `kvfs`
///   beside this benchmark, timed from `kvfs mount` until every value reads
///   back through the mount, `--rounds` times, plain and sealed in turn.
///
/// Every store must end holding what was written, plain and sealed alike, with
/// nothing refused: otherwise the benchmark fails. Speed is reported, never asserted.
enum SealedCostBenchmark: Benchmark {
    static let name = "sealed"
    static let usage = "sealed [--writes 20000] [--write-rounds 10] [--compaction-floor BYTES] [--records 1000000] [--keys 1000] [--rounds 1] [--dir DIR]"
    static let summary = """
        the same store plain and sealed: writes and reads through the library; and a store whose other device's \
        journal holds N records, opened through the library (sealed: the last signature of each read checked, and \
        each one) and mounted, until every value reads back
        """

    static func run(_ options: Options) throws {
        let writes = try options.value("writes", default: 20_000)
        let records = try options.value("records", default: 1_000_000)
        let keys = try options.value("keys", default: 1000)
        let rounds = try options.value("rounds", default: 1)
        let writeRounds = try options.value("write-rounds", default: 10)
        let compactionFloor: Int? = try options.names.contains("compaction-floor") ? options.value("compaction-floor", default: 0) : nil
        let base = try options.value("dir", default: NSTemporaryDirectory())
        guard writes > 0, records > 0, keys > 0, rounds > 0, writeRounds > 0, (compactionFloor ?? 1) > 0 else { throw OptionError(message: "usage: kvfs-bench \(usage)") }
        guard access(MountPair.kvfs, X_OK) == 0 else { throw OptionError(message: "\(MountPair.kvfs) is missing: build kvfs first") }
        let root = URL(fileURLWithPath: base).appendingPathComponent("kvfs-bench-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { _ = try? ChildProcess.run("rm", ["-rf", root]) }
        say("plain and sealed stores under \(root); load \(loadAverage()) on \(ProcessInfo.processInfo.activeProcessorCount) CPUs")
        try writesAndReads(root: root, writes: writes, keys: keys, rounds: writeRounds, compactionFloor: compactionFloor)
        try longJournal(root: root, records: records, keys: keys, rounds: rounds)
        say("load at end \(loadAverage())")
    }

    /// Prints a figure at once: a run takes minutes, and its output often goes to a file.
    private static func say(_ line: String) {
        print("sealed: " + line)
        fflush(nil)  // every stream: `stdout` itself is a global Swift 6 will not read
    }

    private static func key(_ index: Int, _ keys: Int) -> StoreKey { StoreKey("k\(index % keys)") }

    private static func ratio(_ figures: [Double]) -> String { String(format: "%.2fx", figures[1] / figures[0]) }

    /// `writes` writes of 100 bytes over `keys` keys through one device of a plain store and of a sealed one,
    /// both open at once, in `rounds` rounds taken in turn (so that the machine's moods fall on both alike),
    /// then as many reads: the median of the rounds' time per write, and the median of their ratios. With
    /// `compactionFloor`, both stores compact only past that many bytes of records.
    private static func writesAndReads(root: String, writes: Int, keys: Int, rounds: Int, compactionFloor: Int?) throws {
        let value = PropertyListValue.string(String(repeating: "v", count: 100))
        let stores = try Sealing.allCases.map { try CostStore(root: root + "/writes-" + $0.rawValue, sealing: $0, firstDevice: "writer") }
        let devices = try stores.map { try $0.open("writer") }
        if let compactionFloor { for device in devices { device.compactionFloor = compactionFloor } }
        defer { for device in devices { device.close() } }
        let perRound = max(1, writes / rounds)
        var perWrite = [Latencies(), Latencies()], ratios = Latencies()
        for round in 0..<rounds {
            let times = try devices.map { device in
                try seconds {
                    for index in round * perRound..<(round + 1) * perRound { try device.set(value, forKey: key(index, keys)) }
                } / Double(perRound)
            }
            for (index, time) in times.enumerated() { perWrite[index].add(time) }
            ratios.add(times[1] / times[0])
        }
        let perRead = devices.map { device in seconds { for index in 0..<writes { _ = device.value(forKey: key(index, keys)) } } / Double(writes) }
        for store in stores { try store.checkWarnings() }
        let held = devices.map(\.values)
        guard held[0].count == min(rounds * perRound, keys), held[0] == held[1] else {
            throw OptionError(message: "the plain and sealed stores differ after the same writes (\(held[0].count) and \(held[1].count) values)")
        }
        let floor = compactionFloor.map { ", compaction floor \($0) bytes" } ?? ""
        say(String(format: "%d writes of 100 bytes over %d keys in %d rounds of each store in turn" + floor + ": plain %.1f µs, sealed %.1f µs a write "
                   + "(medians of the rounds); the rounds' median ratio %.2fx (from %.2fx to %.2fx)",
                   rounds * perRound, min(rounds * perRound, keys), rounds, perWrite[0].median * 1e6, perWrite[1].median * 1e6,
                   ratios.median, ratios.percentile(0), ratios.maximum))
        let compactions = zip(stores, devices).map { store, device in store.compactions(of: device.deviceID) }
        say("compactions during the writes: plain \(compactions[0]), sealed \(compactions[1])")
        say(String(format: "%d reads: plain %.2f µs, sealed %.2f µs a read (%@)", writes, perRead[0] * 1e6, perRead[1] * 1e6, ratio(perRead)))
        // A write appends its record unsigned; a mark signs a burst once the writer is idle for 2 ms (docs/sealed.md).
        let signature = DeviceStore.secondsPerSignature(count: min(writes, 5000))
        say(String(format: "an Ed25519 signature alone: %.1f µs, which a sealed write would add if it signed its own record", signature * 1e6))
        let frames = [false, true].map { DeviceStore.secondsPerFrame(sealed: $0, valueBytes: 100, count: 100_000) }
        say(String(format: "a write's record framed alone: plain %.2f µs, sealed %.2f µs (padded, its nonce's MAC, ChaCha20-Poly1305, "
                   + "its chain's hash)", frames[0] * 1e6, frames[1] * 1e6))
    }

    /// A store whose other device's journal holds `records` records over `keys` keys, plain and sealed:
    /// the journal written, the store opened through the library and mounted.
    private static func longJournal(root: String, records: Int, keys: Int, rounds: Int) throws {
        let expected = Dictionary(uniqueKeysWithValues: (max(0, records - keys)..<records).map { (key($0, keys), PropertyListValue.integer(Int64($0))) })
        var stores: [CostStore] = [], writing: [Double] = [], bytes: [Int] = []
        for sealing in Sealing.allCases {
            let store = try CostStore(root: root + "/journal-" + sealing.rawValue, sealing: sealing, firstDevice: "writer")
            // The readers are members before the journal is written, so that no roster change comes while they read.
            for reader in ["library", "each", "mount"] { try store.join(reader) }
            let writer = try store.open("writer")
            writer.compactionFloor = .max
            writing.append(try seconds { for index in 0..<records { try writer.set(.integer(Int64(index)), forKey: key(index, keys)) } })
            writer.close()
            bytes.append(store.folderBytes(of: writer.deviceID))
            stores.append(store)
        }
        say(String(format: "the other device's journal, %d writes of small integers over %d keys through the library: written in plain %.1f s, "
                   + "sealed %.1f s; its folder plain %.1f MB, sealed %.1f MB", records, min(records, keys), writing[0], writing[1],
                   Double(bytes[0]) / 1e6, Double(bytes[1]) / 1e6))

        let opening = try stores.map { try $0.timeOpening("library", expecting: expected) }
        DeviceStore.checksEachSignature = true
        let checkingEach = Result { try stores[1].timeOpening("each", expecting: expected) }
        DeviceStore.checksEachSignature = false
        say(String(format: "opening the store and reading that journal through the library: plain %.2f s, sealed %.2f s (%@); "
                   + "sealed checking each signature instead of the last of each read %.2f s", opening[0], opening[1], ratio(opening),
                   try checkingEach.get()))

        for round in 1...rounds {
            let mounts = try stores.map { try $0.timeMount("mount", at: $0.root + "/mount", expecting: expected) }
            say(String(format: "round %d, mounting it (kvfs mount until every value reads back through the mount): plain %.2f s, sealed %.2f s (%@); "
                       + "kvfs mount returned after %.2f s, %.2f s", round, mounts[0].readable, mounts[1].readable,
                       ratio(mounts.map(\.readable)), mounts[0].returned, mounts[1].returned))
        }
    }
}
