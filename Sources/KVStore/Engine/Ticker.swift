import Foundation
import Synchronization

/// Runs a store's once-a-second work (the fsync that bounds how long a
/// write waits to be durable, progress, health) on a queue of its own.
final class Ticker: Sendable {
    /// Where the work runs, one piece at a time.
    let queue = DispatchQueue(label: "kvfs.store.durability", qos: .utility)
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)
    /// Marks the queue, so that ``stop()`` knows when it runs on it.
    private static let onQueue = DispatchSpecificKey<Void>()

    init() {
        queue.setSpecific(key: Self.onQueue, value: ())
    }

    /// Calls `tick` every second, from a second from now.
    func start(_ tick: @escaping @Sendable () -> Void) {
        timer.withLock { timer in
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + 1, repeating: 1)
            source.setEventHandler(handler: tick)
            source.resume()
            timer = source
        }
    }

    /// Stops, and returns once a tick in progress is done, unless this is it
    /// (the store's last reference went in a tick).
    func stop() {
        timer.withLock { $0?.cancel() }
        if DispatchQueue.getSpecific(key: Self.onQueue) == nil { queue.sync {} }
    }
}
