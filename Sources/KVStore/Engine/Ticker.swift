import Foundation
import Synchronization

/// Runs a store's once-a-second work (the fsync that bounds how long a
/// write waits to be durable, progress, health) on a lane of its own
/// (``BackgroundJob/tick``).
final class Ticker: Sendable {
    private let lane: any BackgroundLane
    /// Whether ticks go on: each tick, done, asks for the next one while it does.
    private let running = Atomic(false)

    init(lane: any BackgroundLane) {
        self.lane = lane
    }

    /// Calls `tick` every second, from a second from now.
    func start(_ tick: @escaping @Sendable () -> Void) {
        running.store(true, ordering: .releasing)
        next(tick)
    }

    private func next(_ tick: @escaping @Sendable () -> Void) {
        lane.run(after: .seconds(1)) { [self] in
            guard running.load(ordering: .acquiring) else { return }
            tick()
            next(tick)
        }
    }

    /// Stops, and returns once a tick in progress is done, unless this is it
    /// (the store's last reference went in a tick).
    func stop() {
        running.store(false, ordering: .releasing)
        lane.drain()
    }
}
