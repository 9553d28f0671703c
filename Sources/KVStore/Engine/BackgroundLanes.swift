import Foundation

/// The kinds of work a store does off its callers' threads, each on a lane of its own.
enum BackgroundJob: String, Sendable, CaseIterable {
    /// A compaction a write made due (``Compactor``), tombstone collection with it.
    case compaction
    /// The once-a-second fsync, signing, progress and health check (``Ticker``).
    case tick
    /// A prompt publication of reading progress while another device waits (``ProgressPublisher``).
    case progress
    /// A sealed store's mark over the records a burst of writes appended (``SigningSchedule``).
    case signing
}

/// Where a store runs one kind of its background work: one piece at a time,
/// in the order given (a serial queue).
///
/// The seam between the work and how it runs (docs/architecture.md § Tests):
/// a store runs its lanes on Dispatch queues (``DispatchLanes``); the
/// simulation queues the pieces and lets its seed choose when each runs, so
/// that a schedule, background work included, replays in any process. Each
/// piece of work is written once, and runs either way.
protocol BackgroundLane: Sendable {
    /// Runs `work` on the lane once `delay` has passed.
    func run(after delay: Duration, _ work: @escaping @Sendable () -> Void)
    /// Returns once every piece given before has run, unless called from the
    /// lane itself (the store's last reference went in a piece of its work).
    func drain()
}

/// Makes the lanes of one store.
protocol BackgroundLanes: Sendable {
    /// The lane that runs `job`'s work.
    func lane(for job: BackgroundJob) -> any BackgroundLane
    /// Whether a sealed store signs on the lane of ``BackgroundJob/signing``
    /// rather than on the signing schedule's own thread (``SigningSchedule``).
    var signsOnALane: Bool { get }
}

/// A store's lanes as it runs outside the simulation: a Dispatch queue each.
/// Signing keeps its thread, which costs a write fewer system calls than a
/// Dispatch timer re-armed at each burst (``SigningSchedule``).
struct DispatchLanes: BackgroundLanes {
    func lane(for job: BackgroundJob) -> any BackgroundLane { DispatchLane(job) }
    var signsOnALane: Bool { false }
}

/// A lane on a serial Dispatch queue of its own (`kvfs.store.<job>`).
final class DispatchLane: BackgroundLane {
    private let queue: DispatchQueue
    /// Marks the queue, so that ``drain()`` knows when it runs on it.
    private static let onQueue = DispatchSpecificKey<Void>()

    init(_ job: BackgroundJob) {
        queue = DispatchQueue(label: "kvfs.store.\(job.rawValue)", qos: job == .progress ? .default : .utility)
        queue.setSpecific(key: Self.onQueue, value: ())
    }

    func run(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        if delay <= .zero {
            queue.async(execute: work)
        } else {
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(delay.nanoseconds)), execute: work)
        }
    }

    func drain() {
        if DispatchQueue.getSpecific(key: Self.onQueue) == nil { queue.sync {} }
    }
}

extension Duration {
    /// The duration in whole nanoseconds (none below zero).
    var nanoseconds: UInt64 {
        guard self > .zero else { return 0 }
        return UInt64(components.seconds) * 1_000_000_000 + UInt64(components.attoseconds / 1_000_000_000)
    }
}
