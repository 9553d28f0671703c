import Foundation
import Synchronization

/// When a mount of a sealed store signs what it appended (docs/sealed.md
/// § Signing at sync points): while it keeps the journal between its writes
/// (its lease, ``OwnJournal``), a write appends its records unsigned, and a
/// mark signs the segment's head once the process has appended nothing for
/// ``idle`` after its last unsigned append, and at most ``bound`` after the
/// first. Other devices read the records once their mark is there. (A
/// process without the lease signs at the end of each turn instead.)
///
/// One timer, on the store's ticker queue: the first append of a burst arms
/// it, a later one only notes its time (a write costs no timer), and when it
/// fires it either signs (``DeviceStore/signAppends(waiting:)``) or moves
/// itself to the burst's next deadline. The other sync points (the lease let
/// go, `flush()`, close, a compaction's close mark, the once-a-second tick)
/// sign without it.
final class SigningSchedule: Sendable {
    /// How long a process appends nothing before it signs: a burst of writes gets one mark.
    /// Measured (docs/sealed.md § Signing at sync points): fsops' writes come every 0.1 ms or so.
    static let idle: Duration = .milliseconds(2)
    /// How long after the first unsigned append of a burst it signs, however long the burst lasts:
    /// the most a write waits to be read by other devices, besides their synchronizer.
    static let bound: Duration = .milliseconds(20)

    private let queue: DispatchQueue

    private struct State {
        var timer: (any DispatchSourceTimer)?
        /// The first and last unsigned appends of the burst not signed yet (`DispatchTime` nanoseconds); nil when none.
        var burst: (first: UInt64, last: UInt64)?
        var sign: (@Sendable () -> Bool)?
    }

    private let state = Mutex(State())

    /// A schedule whose timer runs on `queue` (the store's ticker's).
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Starts signing with `sign`, which returns false when the journal was busy (it is tried again after ``idle``).
    func start(_ sign: @escaping @Sendable () -> Bool) {
        state.withLock { state in
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.fire() }
            timer.resume()
            state.timer = timer
            state.sign = sign
            if state.burst != nil { timer.schedule(deadline: .now() + Self.idle.dispatch) }
        }
    }

    /// Stops the timer: at close, which signs itself.
    func stop() {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
        }
    }

    /// Notes that this process appended records unsigned, now.
    func appended() {
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { state in
            if let burst = state.burst {
                state.burst = (burst.first, now)
            } else {
                state.burst = (now, now)
                state.timer?.schedule(deadline: .now() + Self.idle.dispatch)
            }
        }
    }

    /// The timer fired: signs when the burst has been idle long enough or has lasted its bound, else waits
    /// on. When the journal is busy (a write in its turn), it tries again after ``idle``, the burst's
    /// bound kept: a stream of writes cannot put its mark off.
    private func fire() {
        let now = DispatchTime.now().uptimeNanoseconds
        let due: (sign: @Sendable () -> Bool, first: UInt64)? = state.withLock { state in
            guard let burst = state.burst, let sign = state.sign else { return nil }
            let deadline = min(burst.last + Self.idle.nanoseconds, burst.first + Self.bound.nanoseconds)
            guard now >= deadline else {
                state.timer?.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
                return nil
            }
            state.burst = nil  // appends from now on start the next burst
            return (sign, burst.first)
        }
        guard let due, !due.sign() else { return }
        state.withLock { state in
            state.burst = (min(state.burst?.first ?? due.first, due.first), state.burst?.last ?? now)
            state.timer?.schedule(deadline: .now() + Self.idle.dispatch)
        }
    }
}

private extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: UInt64 { UInt64(components.seconds) * 1_000_000_000 + UInt64(components.attoseconds / 1_000_000_000) }
    /// The duration as a `DispatchTimeInterval`.
    var dispatch: DispatchTimeInterval { .nanoseconds(Int(nanoseconds)) }
}
