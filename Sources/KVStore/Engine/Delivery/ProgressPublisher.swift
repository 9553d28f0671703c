import Foundation
import Synchronization

/// What this device says of how far it has got: to the other devices, in its
/// folder, how far it has read each of them (``ReadProgress``, what their
/// tombstone collection waits for), at least every half minute so that they
/// know it runs, and what it adopted of devices that went (``Adoption``); to
/// itself, in its state directory, its latest stamp, which its clock starts
/// past even should its folder be gone.
///
/// Progress is published now and then; and, while another device waits for
/// delivery (`kvfs wait`: its ``WaitSignal``), soon after this device reads
/// new records of the devices it waits for (``publishPromptly(of:_:then:)``),
/// so that the waiter learns within a fraction of a second. Not while nobody
/// waits: each publication is a change for the synchronizer, which starts its
/// pause between two messages (Syncthing's 250 ms), and the next write waits it out.
///
/// Every file is written (and fsync'ed) without the store's lock, one writer
/// at a time: what to write is taken under the store's lock from within
/// this publisher's, so a later publication never loses to an earlier one.
final class ProgressPublisher: Sendable {
    /// How soon after the last publication a prompt one may follow: a device
    /// reading a stream of writes publishes at most this often.
    static let promptInterval: TimeInterval = 0.1

    private let state: Mutex<State>
    /// Where prompt publications run, off the thread that read the records.
    private let lane: any BackgroundLane
    private let sync: SyncDirectory
    private let device: DeviceID
    private let clock: HybridLogicalClock
    private let warn: @Sendable (String) -> Void

    private struct State {
        /// What was published last, without its time: a heartbeat is no change.
        var published: ReadProgress?
        var publishedAt = Date.distantPast
        /// How often, at most, progress is published (tests lengthen it).
        var interval: TimeInterval = 10
        /// How often, at least, progress is published, changed or not.
        var heartbeatInterval: TimeInterval = 30
        /// The own stamp last noted in the state directory.
        var notedOwnStamp: HLCTimestamp?
        /// Whether a prompt publication is on its way.
        var promptPending = false
        /// The devices it publishes what this device read of, when what that says moved.
        var promptAwaited: Set<DeviceID> = []
    }

    /// - Parameter notedOwnStamp: the stamp the state directory holds already.
    init(sync: SyncDirectory, device: DeviceID, clock: HybridLogicalClock, notedOwnStamp: HLCTimestamp?,
         lane: any BackgroundLane, warn: @escaping @Sendable (String) -> Void) {
        state = Mutex(State(notedOwnStamp: notedOwnStamp))
        self.lane = lane
        self.sync = sync
        self.device = device
        self.clock = clock
        self.warn = warn
    }

    /// How often, at most, ``publishIfDue(_:)`` publishes (tests set it to
    /// infinity, to publish when they say: then nothing is published promptly either).
    var interval: TimeInterval {
        get { state.withLock { $0.interval } }
        set { state.withLock { $0.interval = newValue } }
    }

    /// Publishes `current()` — what the store has read, taken under its
    /// lock; nil when this device publishes nothing — if it changed since it
    /// was last published, or as a `heartbeat` in any case.
    func publish(heartbeat: Bool = false, _ current: () -> ReadProgress?) {
        state.withLock { state in _ = publish(&state, heartbeat: heartbeat, current) }
    }

    /// Publishes as ``publish(heartbeat:_:)`` does once ``interval`` has
    /// passed since the last time, as a heartbeat once its interval has.
    func publishIfDue(_ current: () -> ReadProgress?) {
        state.withLock { state in
            let since = Date().timeIntervalSince(state.publishedAt)
            guard since >= state.interval else { return }
            _ = publish(&state, heartbeat: since >= state.heartbeatInterval, current)
        }
    }

    /// Publishes `current()` soon, if how far it says this device has read
    /// one of the `awaited` devices moved since the last publication (a
    /// publication that only another device's reading could set off would
    /// set off the other's in turn): at once when the last one is at least
    /// ``promptInterval`` old, else that long after it, on a lane of its
    /// own. Then calls `published` (whoever carries this device's folder to
    /// other machines). Calls while one is on its way add their devices to it.
    func publishPromptly(of awaited: Set<DeviceID>, _ current: @escaping @Sendable () -> ReadProgress?,
                         then published: @escaping @Sendable () -> Void) {
        let delay: TimeInterval? = state.withLock { state in
            guard state.interval.isFinite else { return nil }
            state.promptAwaited.formUnion(awaited)
            guard !state.promptPending else { return nil }
            state.promptPending = true
            return max(0, Self.promptInterval - Date().timeIntervalSince(state.publishedAt))
        }
        guard let delay else { return }
        lane.run(after: .seconds(delay)) { [self] in
            let didPublish = state.withLock { state in
                let awaited = state.promptAwaited
                (state.promptPending, state.promptAwaited) = (false, [])
                guard let progress = current(), awaited.contains(where: { progress.read[$0] != state.published?.read[$0] }) else { return false }
                return publish(&state, heartbeat: false) { progress }
            }
            if didPublish { published() }
        }
    }

    /// Publishes what this device's folder adopted (`adopted.json`), as
    /// `current()` says it now (taken under the store's lock), unless it adopted nothing.
    func publishAdoptions(_ current: () -> [DeviceID: Adoption]?) {
        state.withLock { _ in
            guard let adoptions = current(), !adoptions.isEmpty else { return }
            do {
                try sync.publish(adoptions, of: device)
            } catch {
                warn("cannot publish \(Adoption.fileName): \(error)")
            }
        }
    }

    /// Forgets what was published: the file went with this device's folder, and is written again.
    func forgetPublished() {
        state.withLock { $0.published = nil }
    }

    /// Notes this device's latest own stamp through `note` (into its state
    /// directory), if it moved since it was last noted.
    func noteOwnStamp(_ latest: HLCTimestamp?, with note: (HLCTimestamp) -> Void) {
        state.withLock { state in
            guard let latest, latest != state.notedOwnStamp else { return }
            note(latest)
            state.notedOwnStamp = latest
        }
    }

    /// Publishes, unless nothing changed and no heartbeat is due; returns whether it wrote the file.
    private func publish(_ state: inout State, heartbeat: Bool, _ current: () -> ReadProgress?) -> Bool {
        guard var progress = current(), heartbeat || progress != state.published else { return false }
        progress.at = try? clock.now()
        do {
            try sync.publish(progress, of: device)
        } catch {
            warn("cannot publish reading progress: \(error)")
            return false
        }
        progress.at = nil
        state.published = progress
        state.publishedAt = Date()
        return true
    }
}
