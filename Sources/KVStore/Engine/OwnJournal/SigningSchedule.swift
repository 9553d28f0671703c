import Foundation
import LinuxSystem
import Synchronization

/// When a process of a sealed store signs what it appended (docs/sealed.md
/// § Signing at sync points): a write appends its records unsigned, and a
/// mark signs the segment's head once the process has appended nothing for
/// ``idle`` after its last unsigned append, and at most ``bound`` after the
/// first. Other devices read the records once their mark is there. A mount
/// and a program using the library sign so alike: one Ed25519 signature a
/// write was most of what sealing cost a program's write.
///
/// One thread of the store's (started by its first append) sleeps until
/// the burst's next deadline, and either signs (``DeviceStore/signAppends(waiting:)``)
/// or sleeps on to the next one. A write notes its time under a lock and makes no
/// system call, but the first of a burst, which wakes the thread if it sleeps
/// with nothing to sign. (A Dispatch timer, re-armed at each burst and each
/// deadline, cost fsops through a sealed mount 1.1 to 1.6 system calls a
/// write: `timerfd_settime`, `epoll_wait`, `epoll_ctl`, eventfd `write`s and
/// `futex`es, and a sixth more context switches.) The other sync points (the lease let
/// go, `flush()`, close, a compaction's close mark, the once-a-second tick)
/// sign without it; and a program that returns from `main` (or calls `exit`)
/// with a burst not signed yet signs it as it exits (``signAtExit()``), so
/// that a program that writes and ends at once is read by other devices.
final class SigningSchedule: Sendable {
    /// How long a process appends nothing before it signs: a burst of writes gets one mark.
    /// Measured (docs/sealed.md § Signing at sync points): fsops' writes come every 0.1 ms or so.
    static let idle: Duration = .milliseconds(2)
    /// How long after the first unsigned append of a burst it signs, however long the burst lasts:
    /// the most a write waits to be read by other devices, besides their synchronizer.
    static let bound: Duration = .milliseconds(20)

    private struct State {
        /// The first and last unsigned appends of the burst not signed yet (`DispatchTime` nanoseconds); nil when none.
        var burst: (first: UInt64, last: UInt64)?
        /// When the journal was busy at the last try, not before which the next is made.
        var retry: UInt64?
        var sign: (@Sendable () -> Bool)?
        var threadStarted = false
        var stopped = false
        /// ``idle`` and ``bound``, but for a test that holds the marks off (``delays``).
        var delays = (idle: SigningSchedule.idle, bound: SigningSchedule.bound)
    }

    private let state = Mutex(State())
    /// Where each burst's mark is a piece of work, in the simulation (``BackgroundLane``); nil for the thread.
    private let lane: (any BackgroundLane)?
    /// Wakes the thread: a burst began while it slept with nothing to sign, or the schedule stopped.
    private let wake = DispatchSemaphore(value: 0)

    /// The name of the schedule's thread (`ps -L`).
    static let threadName = "kvfs-signer"

    /// A schedule that signs on its own thread, or, given a `lane`, as a piece of work there.
    init(lane: (any BackgroundLane)? = nil) {
        self.lane = lane
    }

    /// Starts signing with `sign`, which returns false when the journal was busy (it is tried again after ``idle``).
    func start(_ sign: @escaping @Sendable () -> Bool) {
        let (wakes, bursting) = state.withLock { state in
            state.sign = sign
            state.stopped = false
            return (state.burst != nil && state.threadStarted, state.burst != nil)
        }
        if wakes { wake.signal() }
        if let lane, bursting { signOnLane(lane) }
        startThreadIfBursting()
        Self.running.withLock { $0[ObjectIdentifier(self)] = Running(schedule: self) }
        _ = Self.exitHook
    }

    /// Stops the thread (it ends at its next wake-up): at close, which signs itself.
    func stop() {
        state.withLock { $0.stopped = true }
        wake.signal()
        Self.running.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
    }

    /// How long the schedule waits before it signs a burst (``idle``, ``bound``): a test lengthens them to
    /// see what the other sync points sign.
    var delays: (idle: Duration, bound: Duration) {
        get { state.withLock { $0.delays } }
        set {
            state.withLock { $0.delays = newValue }
            wake.signal()
        }
    }

    // MARK: At exit

    private struct Running {
        weak var schedule: SigningSchedule?
    }

    /// The schedules started and not stopped in this process: a store a program never closes
    /// (`UbiquitousKeyValueStore.default`'s lives until the process ends) is among them.
    private static let running = Mutex<[ObjectIdentifier: Running]>([:])

    /// Registers ``signAtExit()`` with `atexit`, once a process starts a schedule.
    private static let exitHook: Void = { atexit { SigningSchedule.signAtExit() } }()

    /// How long a process at exit waits for a journal another thread or process has: a mark not
    /// made then is made by the device's next process (the mount's tick, or the next to open the store).
    static let exitPatience: Duration = .milliseconds(200)

    /// Signs, as the process exits, what each running schedule has not signed yet. Never waits for the
    /// journal's turn (the thread calling `exit` may be in one): a journal found busy, this process's
    /// turn or another process's `journal.lock`, is tried again every millisecond, for at most
    /// ``exitPatience`` in all.
    static func signAtExit() {
        let schedules = running.withLock { $0.values.compactMap(\.schedule) }
        let deadline = DispatchTime.now().uptimeNanoseconds + exitPatience.nanoseconds
        for schedule in schedules {
            guard let sign = schedule.state.withLock({ $0.stopped ? nil : $0.sign }) else { continue }
            while !sign(), DispatchTime.now().uptimeNanoseconds < deadline { usleep(1000) }
        }
    }

    /// Notes that this process appended records unsigned, now.
    func appended() {
        let now = DispatchTime.now().uptimeNanoseconds
        let began = state.withLock { state in
            if let burst = state.burst {
                state.burst = (burst.first, now)
                return false
            }
            state.burst = (now, now)
            return true
        }
        guard began else { return }
        if let lane { return signOnLane(lane) }
        wake.signal()  // the thread waits with nothing to sign: one futex wake a burst
        startThreadIfBursting()
    }

    /// Signs the burst as a piece of work on `lane`, when the simulation's schedule runs it; a journal found
    /// busy leaves the burst unsigned for another piece.
    private func signOnLane(_ lane: any BackgroundLane) {
        lane.run(after: state.withLock { $0.delays.idle }) { [self] in
            let sign = state.withLock { state -> (@Sendable () -> Bool)? in
                guard !state.stopped, state.burst != nil, let sign = state.sign else { return nil }
                state.burst = nil
                return sign
            }
            guard let sign, !sign() else { return }
            let now = DispatchTime.now().uptimeNanoseconds
            state.withLock { $0.burst = $0.burst ?? (now, now) }
            signOnLane(lane)
        }
    }

    /// The first burst after ``start(_:)`` starts the thread: a store that never writes never has one.
    private func startThreadIfBursting() {
        let starts = state.withLock { state in
            guard lane == nil, state.sign != nil, state.burst != nil, !state.threadStarted, !state.stopped else { return false }
            state.threadStarted = true
            return true
        }
        guard starts else { return }
        let thread = Thread { [self] in
            ThreadName.set(Self.threadName)
            run()
        }
        thread.start()
    }

    /// What the thread does next.
    private enum Step {
        case stop
        /// Nothing to sign: sleeps until a burst begins.
        case waitForBurst
        case sleep(until: UInt64)
        case sign(@Sendable () -> Bool, first: UInt64)
    }

    /// The thread: signs each burst when it has been idle long enough or has lasted its bound, sleeping
    /// until then. When the journal is busy (a write in its turn), it tries again after ``idle``, the
    /// burst's bound kept: a stream of writes cannot put its mark off.
    private func run() {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            let step: Step = state.withLock { state in
                guard !state.stopped else {
                    state.threadStarted = false
                    return .stop
                }
                guard let burst = state.burst, let sign = state.sign else { return .waitForBurst }
                let deadline = max(min(burst.last + state.delays.idle.nanoseconds, burst.first + state.delays.bound.nanoseconds),
                                   state.retry ?? 0)
                guard now >= deadline else { return .sleep(until: deadline) }
                state.burst = nil  // appends from now on start the next burst
                state.retry = nil
                return .sign(sign, first: burst.first)
            }
            switch step {
            case .stop:
                return
            case .waitForBurst:
                wake.wait()
            case let .sleep(until: deadline):
                _ = wake.wait(timeout: DispatchTime(uptimeNanoseconds: deadline))
            case let .sign(sign, first):
                guard !sign() else { continue }
                state.withLock { state in
                    state.burst = (min(state.burst?.first ?? first, first), state.burst?.last ?? now)
                    state.retry = DispatchTime.now().uptimeNanoseconds + state.delays.idle.nanoseconds
                }
            }
        }
    }
}
