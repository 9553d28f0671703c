import Dispatch
import Foundation
import KVStore
import Synchronization

/// Device A writes a counter; device B — a `DeviceStore` with a `SyncWatcher`
/// — notices it: the time from just before A's `set` to B's change observer
/// seeing the new value.
final class PropagationProbe: Sendable {
    private let writer: DeviceStore
    private let reader: DeviceStore
    private let watcher: SyncWatcher
    private let seen = Mutex<Int64>(0)
    private let signal = DispatchSemaphore(value: 0)
    private static let key: StoreKey = "probe"

    /// A writes in `writerFolder`, B reads `readerFolder` (the same folder, or a synchronized copy).
    init(writer: DeviceStore, reader: DeviceStore, pollInterval: TimeInterval, polling: Bool) {
        self.writer = writer
        self.reader = reader
        watcher = SyncWatcher(store: reader, pollInterval: pollInterval, polling: polling)
        _ = reader.addChangeObserver { [self] change in
            guard change.keys.contains(Self.key), case let .integer(value)? = reader.value(forKey: Self.key) else { return }
            seen.withLock { $0 = max($0, value) }
            signal.signal()
        }
    }

    /// Writes `count` times, `pause()` seconds apart, calling `afterWrite` after each; returns the latencies.
    func measure(count: Int, pause: () -> TimeInterval, afterWrite: () throws -> Void = {}) throws -> Latencies {
        var latencies = Latencies()
        let start = seen.withLock { $0 }
        for index in 1...Int64(count) {
            Thread.sleep(forTimeInterval: pause())
            let written = Date()
            try writer.set(.integer(start + index), forKey: Self.key)
            try afterWrite()
            while seen.withLock({ $0 }) < start + index {
                guard signal.wait(timeout: .now() + 30) == .success else {
                    throw OptionError(message: "write \(index) was not noticed within 30 s")
                }
            }
            latencies.add(Date().timeIntervalSince(written))
        }
        return latencies
    }

    /// Stops watching and closes both stores.
    func close() {
        watcher.stop()
        writer.close()
        reader.close()
    }
}
