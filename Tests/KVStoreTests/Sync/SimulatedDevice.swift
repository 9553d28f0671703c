import Foundation
import Synchronization
@testable import KVStore

/// Milliseconds of a simulated wall clock that the schedule moves forward.
final class SimulatedTime: Sendable {
    private let milliseconds = Mutex<UInt64>(1_795_000_000_000)

    var now: UInt64 { milliseconds.withLock { $0 } }

    func advance(by step: UInt64) { milliseconds.withLock { $0 += step } }
}

/// One device of a simulated cluster: a real ``DeviceStore`` on its replica of
/// the sync directory, whose wall clock runs `skew` milliseconds off, and
/// which can be stopped (closed) and started again.
final class SimulatedDevice {
    let name: String
    let syncDirectory: URL
    let stateDirectory: URL
    let skew: Int64
    private let time: SimulatedTime
    private let model: ReferenceModel
    /// Where its store's background work waits for the schedule.
    private let scheduler: SimulatedScheduler
    private(set) var store: DeviceStore?
    /// Its id, once it has started.
    private(set) var id: DeviceID?
    /// Retired by another device: it never starts again.
    var isRetired = false
    /// Compaction kicks in at this segment size: small, so that schedules compact often.
    static let compactionFloor = 2048

    init(name: String, syncDirectory: URL, stateDirectory: URL, skew: Int64, time: SimulatedTime, model: ReferenceModel,
         scheduler: SimulatedScheduler) {
        self.name = name
        self.syncDirectory = syncDirectory
        self.stateDirectory = stateDirectory
        self.skew = skew
        self.time = time
        self.model = model
        self.scheduler = scheduler
    }

    var isRunning: Bool { store != nil }

    /// Opens the store: a restart when it ran before (a new clock, everything read again from the files).
    func start() throws {
        let (time, skew) = (self.time, skew)
        let clock = HybridLogicalClock { UInt64(Int64(time.now) + skew) }
        let store = try DeviceStore(syncDirectory: syncDirectory, stateDirectory: stateDirectory, deviceName: name,
                                    clock: clock, warn: { _ in }, journalFiles: DiskJournalFiles(), lanes: scheduler.lanes(for: name))
        store.journal.folder.withLock { $0.writer.compactionFloor = Self.compactionFloor }
        store.progress.interval = .infinity  // published by the schedule, so that runs replay exactly
        store.notifier.listenToAppends { [model] in model.add($0) }
        self.store = store
        id = store.deviceID
    }

    /// Closes the store (a clean stop: it publishes its progress).
    func stop() {
        store?.close()
        store = nil
    }

    /// Compacts now, whatever the journal's size.
    func compact() {
        guard let store else { return }
        store.compact()
    }

    /// Publishes reading progress now.
    func publishProgress() {
        guard let store else { return }
        store.publishProgress()
    }
}
