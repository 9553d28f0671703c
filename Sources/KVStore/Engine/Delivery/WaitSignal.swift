import Foundation
import Synchronization

/// What a device publishes in its folder (`waiting.json`) while someone on
/// it waits for delivery (`kvfs wait`, `waitUntilDelivered`, a `getfattr` of
/// `user.kvfs.delivered`, `kvfs history`): the devices whose records it
/// waits to see read, and for how long the request stands. The other devices
/// publish their progress promptly (``ProgressPublisher/publishPromptly(of:_:then:)``)
/// only while such a request stands and their reading of those devices
/// moved; otherwise on the schedule, so that a read makes no synchronizer
/// change while nobody waits (docs/format.md § Read progress).
///
/// `{"of":["<device id>",...],"seconds":10}`. A reader counts the seconds
/// from when the file arrived in its copy of the folder (its status-change
/// time, as ``FolderSurvey`` sees it), by its own clock, so devices' clocks
/// need not agree; the file stays when the request lapses, and is replaced by the next one.
struct WaitSignal: Equatable, Sendable {
    static let fileName = "waiting.json"
    /// How long a request stands: a waiter still waiting renews it once half of this has passed.
    static let lasting: TimeInterval = 10
    /// The longest a reader lets a request stand, whatever it says.
    static let longest: TimeInterval = 60

    /// The devices whose records the waiter waits to see read.
    var devices: Set<DeviceID>
    /// How long the request stands after it arrived, in seconds.
    var seconds: TimeInterval
    /// When the file arrived in this copy of the folder (its status-change time); nil until known.
    var arrived: Date?

    init(devices: Set<DeviceID>, seconds: TimeInterval, arrived: Date? = nil) {
        self.devices = devices
        self.seconds = seconds
        self.arrived = arrived
    }

    /// The request a file holds, or nil when it is not one.
    init?(json text: String) {
        guard let document = JSONDocument.decoded(Document.self, from: text.utf8), document.seconds.isFinite else { return nil }
        var devices: Set<DeviceID> = []
        for hex in document.of {
            guard let device = DeviceID(hex: hex) else { return nil }
            devices.insert(device)
        }
        self.init(devices: devices, seconds: document.seconds)
    }

    /// The file's content.
    func json() -> [UInt8] {
        JSONDocument.sorted(Document(of: devices.map(\.hex).sorted(), seconds: seconds)) + [0x0A]
    }

    /// How long the request still stands at `now` (0 or less: it lapsed):
    /// its seconds (at most ``longest``) from its arrival. A file dated ahead
    /// of `now` by its seconds or more (a filesystem whose clock is ahead) does not stand at all.
    func remaining(at now: Date) -> TimeInterval {
        guard let arrived else { return 0 }
        let seconds = min(max(seconds, 0), Self.longest), ahead = arrived.timeIntervalSince(now)
        return ahead < seconds ? ahead + seconds : 0
    }

    /// The devices that some other device's standing request (in `folders`,
    /// as a survey saw them) waits to see read, at `now`.
    static func awaited(in folders: [DeviceID: FolderSurvey.Seen], besides device: DeviceID, at now: Date) -> Set<DeviceID> {
        var awaited: Set<DeviceID> = []
        for (other, folder) in folders where other != device {
            if let signal = folder.waiting, signal.remaining(at: now) > 0 { awaited.formUnion(signal.devices) }
        }
        return awaited
    }

    private struct Document: Codable {
        var of: [String]
        var seconds: Double
    }
}

/// Writes this device's ``WaitSignal`` when a delivery query finds a
/// device that has not read what it asks about, unless a standing request
/// (its own folder's, as the query's survey saw it) already covers it for
/// more than half its time: a waiter polling every 10 ms writes the file once
/// at the start and once every 5 s after, and nothing while nobody waits.
///
/// A store opened read-only (`kvfs wait`, `kvfs history` without a mount)
/// writes nothing else, and no folder: this file only, into its folder when
/// it is there and may be written; else the request is not made, and the
/// other devices publish on their schedule.
final class WaitAnnouncer: Sendable {
    private let device: DeviceID
    /// The sync directory to write through: writable even when the store was opened read-only.
    private let sync: SyncDirectory
    private let warn: @Sendable (String) -> Void
    private let state = Mutex(State())

    private struct State {
        var lasting = WaitSignal.lasting
        /// When writing the signal last failed: tried again once half a request's time has passed, said once.
        var failedAt: Date?
        var warned = false
    }

    init(sync: SyncDirectory, device: DeviceID, warn: @escaping @Sendable (String) -> Void) {
        self.sync = sync.isWritable ? sync : SyncDirectory(path: sync.path).sealed(by: sync.sealing)
        self.device = device
        self.warn = warn
    }

    /// How long the requests written stand (tests shorten it).
    var lasting: TimeInterval {
        get { state.withLock { $0.lasting } }
        set { state.withLock { $0.lasting = newValue } }
    }

    /// Asks the other devices to publish promptly what they read of
    /// `devices`: writes the signal, with whatever the standing one (`standing`,
    /// this device's folder's) still asks, unless that covers them for more
    /// than half its time. Returns whether it wrote it.
    @discardableResult
    func ask(for devices: Set<DeviceID>, standing: WaitSignal?, now: Date = Date()) -> Bool {
        let remaining = standing?.remaining(at: now) ?? 0
        let lasting: TimeInterval? = state.withLock { state in
            if let failedAt = state.failedAt, now.timeIntervalSince(failedAt) < state.lasting / 2 { return nil }
            if let standing, devices.isSubset(of: standing.devices), remaining > state.lasting / 2 { return nil }
            return state.lasting
        }
        guard let lasting else { return false }
        let signal = WaitSignal(devices: devices.union(remaining > 0 ? standing?.devices ?? [] : []), seconds: lasting)
        do {
            let deviceFolder = sync.folder(of: device)
            guard let folder = try deviceFolder.open() else { return false }
            try deviceFolder.writeSigned(WaitSignal.fileName, signal.json(), into: folder)
            state.withLock { $0.failedAt = nil }
            return true
        } catch {
            let first = state.withLock { state in
                state.failedAt = now
                defer { state.warned = true }
                return !state.warned
            }
            if first { warn("cannot ask the other devices to publish their progress promptly (\(WaitSignal.fileName)): \(error)") }
            return false
        }
    }
}

extension SyncDirectory {
    /// The request a device folder's `waiting.json` makes, arrived at `arrived`.
    func waitSignal(in folder: Folder?, of device: DeviceID, arrived: Date?) -> WaitSignal? {
        guard var signal = self.folder(of: device).readSigned(WaitSignal.fileName, in: folder)
            .flatMap({ WaitSignal(json: String(decoding: $0, as: UTF8.self)) }) else { return nil }
        signal.arrived = arrived
        return signal
    }
}
