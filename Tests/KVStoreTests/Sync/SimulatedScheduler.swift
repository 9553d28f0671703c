import Synchronization
@testable import KVStore

/// The simulation's background work (``BackgroundLane``): every store's lanes
/// queue their pieces of work here, and the schedule runs one when its seed
/// says (``runOne(using:)``). A lane drained (a store closing, a flush)
/// runs what it queued before at once, as a Dispatch queue's wait would; a
/// delay is the schedule's to choose, as the load of a machine does. Nothing
/// runs on another thread, so a seed gives the same steps in any process, on a
/// quiet machine and under load.
final class SimulatedScheduler: Sendable {
    /// A piece of work waiting on a lane.
    private struct Piece {
        let number: Int
        let lane: String
        let work: @Sendable () -> Void
    }

    private struct State {
        var pending: [Piece] = []
        var numbered = 0
        /// The lanes whose piece runs now: a drain from within it returns at once.
        var running: Set<String> = []
    }

    private let state = Mutex(State())

    /// The lanes of the store of device `owner` (named so in the trace).
    func lanes(for owner: String) -> any BackgroundLanes { Lanes(scheduler: self, owner: owner) }

    /// The lanes with work waiting, in the order the work was given: `dev1 compaction`.
    var waiting: [String] { state.withLock { $0.pending.map(\.lane) } }

    /// Runs one piece of the work waiting, chosen by `random`; says which, or nil when none waits.
    func runOne(using random: inout SeededRandom) -> String? {
        let pieces = state.withLock { $0.pending }
        guard !pieces.isEmpty else { return nil }
        let piece = pieces[Int.random(in: 0..<pieces.count, using: &random)]
        run(piece)
        return piece.lane
    }

    /// Drops the work `owner`'s lanes hold, unrun: what a `kill -9` of its process loses. Says what it dropped.
    func discard(of owner: String) -> [String] {
        state.withLock { state in
            let dropped = state.pending.filter { $0.lane.hasPrefix(owner + " ") }
            state.pending.removeAll { $0.lane.hasPrefix(owner + " ") }
            return dropped.map(\.lane)
        }
    }

    /// Runs every piece that `lane` queued so far, oldest first.
    fileprivate func drain(_ lane: String) {
        let pieces = state.withLock { state in state.running.contains(lane) ? [] : state.pending.filter { $0.lane == lane } }
        for piece in pieces { run(piece) }
    }

    fileprivate func add(_ work: @escaping @Sendable () -> Void, on lane: String) {
        state.withLock { state in
            state.numbered += 1
            state.pending.append(Piece(number: state.numbered, lane: lane, work: work))
        }
    }

    /// Runs `piece`, unless it ran already (a drain within another piece's run took it).
    private func run(_ piece: Piece) {
        let taken = state.withLock { state in
            guard let index = state.pending.firstIndex(where: { $0.number == piece.number }) else { return false }
            state.pending.remove(at: index)
            state.running.insert(piece.lane)
            return true
        }
        guard taken else { return }
        piece.work()
        _ = state.withLock { $0.running.remove(piece.lane) }
    }

    private struct Lanes: BackgroundLanes {
        let scheduler: SimulatedScheduler, owner: String

        func lane(for job: BackgroundJob) -> any BackgroundLane { Lane(scheduler: scheduler, name: "\(owner) \(job.rawValue)") }
        var signsOnALane: Bool { true }
    }

    private struct Lane: BackgroundLane {
        let scheduler: SimulatedScheduler, name: String

        func run(after delay: Duration, _ work: @escaping @Sendable () -> Void) { scheduler.add(work, on: name) }

        func drain() { scheduler.drain(name) }
    }
}
