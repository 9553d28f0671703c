import Foundation
import KVStore

/// `kvfs-bench history`: gives a store a long journal history (for timing how
/// long a mount of it takes to be ready), and times opening it again.
enum HistoryBenchmark: Benchmark {
    static let name = "history"
    static let usage = "history --records N --sync-dir DIR --state-dir DIR [--keys 100]"
    static let summary = "writes N records over a few keys through one device (compacting as it goes), then times reopening the store"

    static func run(_ options: Options) throws {
        let records = try options.value("records", default: 1_000_000)
        let keys = try options.value("keys", default: 100)
        let sync = URL(fileURLWithPath: try options.value("sync-dir", default: ""))
        let state = URL(fileURLWithPath: try options.value("state-dir", default: ""))
        guard !sync.path.isEmpty, !state.path.isEmpty, records > 0, keys > 0 else {
            throw OptionError(message: "usage: kvfs-bench \(usage)")
        }
        let started = Date()
        let store = try DeviceStore(syncDirectory: sync, stateDirectory: state, deviceName: "history")
        for index in 0..<records {
            try store.set(.integer(Int64(index)), forKey: "key-\(index % keys)")
        }
        store.close()
        let written = Date()
        try DeviceStore(syncDirectory: sync, stateDirectory: state, deviceName: "history").close()
        print(String(format: "history: %d records over %d keys written in %.1f s; the store reopens in %.0f ms",
                     records, keys, written.timeIntervalSince(started), Date().timeIntervalSince(written) * 1000))
    }
}
