import Foundation
import LinuxSystem
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// Calls a store's ``DeviceStore/refresh()`` when the sync directory changes:
/// at once through inotify where the kernel reports changes (local disks, and
/// folders a synchronizer writes on this machine), and every `pollInterval`
/// in any case, which is all there is on NFS and other folders whose changes
/// are made by other machines (`polling: true` skips inotify altogether).
public final class SyncWatcher: Sendable {
    private let store: DeviceStore
    private let pollInterval: TimeInterval
    /// Nil when polling alone.
    private let inotify: Inotify?
    /// Wakes the thread to stop; nil when no eventfd could be made (out of
    /// descriptors), and then the thread sees ``stopping`` at its next poll.
    private let stopSignal: EventCounter?
    private let stopping = Atomic<Bool>(false)
    /// Whether the watcher's thread is done with the store (`true` under the
    /// condition's lock), which ``stop()`` waits for.
    private let finished = NSCondition()
    nonisolated(unsafe) private var hasFinished = false
    /// The watch on this device's own folder: its events, which the device's
    /// other processes' writes cause, need only that folder read.
    private let ownWatch = Atomic<Int32>(-1)
    /// The watch on the state directory's `journal.ask`, which another
    /// process of the device closes to ask this one, a mount, for the
    /// journal it keeps between its writes (``OwnJournal``); -1 when this store keeps none.
    private let askWatch = Atomic<Int32>(-1)
    /// The devices folder's status when its folders were last watched, if
    /// it had settled then (``FolderSurvey/settling``): a folder added or
    /// made again changes it, and only then are they all watched again
    /// (thousands of calls for thousands of folders).
    private let watchedDevices = Mutex<FolderSurvey.FileStamp?>(nil)

    /// Starts watching `store`'s sync directory.
    ///
    /// When inotify is asked for but the kernel refuses it (most often: this
    /// user already has `fs.inotify.max_user_instances` of them, 128 by
    /// default, which editors and synchronizers use up), this says so once and
    /// polls at least every second instead.
    ///
    /// - Parameters:
    ///   - store: the store to refresh when its sync directory changes.
    ///   - pollInterval: seconds between refreshes when nothing is reported.
    ///   - polling: whether to rely on polling alone (NFS and other network folders).
    public init(store: DeviceStore, pollInterval: TimeInterval = 1, polling: Bool = false) {
        self.store = store
        var refusal: SystemCallError?
        do {
            inotify = polling ? nil : try Inotify()
        } catch {
            inotify = nil
            refusal = error
        }
        self.pollInterval = max(refusal != nil ? min(pollInterval, 1) : pollInterval, 0.001)
        if let refusal {
            DeviceStore.printWarning("cannot watch \(store.syncDirectory.path) with inotify (\(refusal.errno)): "
                + "noticing other devices' changes by polling every \(self.pollInterval) s instead; "
                + "to get them at once, raise fs.inotify.max_user_instances (sysctl) and remount")
        }
        stopSignal = try? EventCounter()
        watchFolders()
        // A mount keeps the journal between its writes while nobody asks for it; without inotify nobody could.
        if let inotify, store.state.mountPoint != nil, let ask = try? inotify.watch(store.state.askPath, for: [.closeWrite, .dontFollow]) {
            askWatch.store(ask.rawValue, ordering: .relaxed)
            store.journal.allowLease { [weak self] leased in self?.watchOwnFolder(leased: leased) }
        }
        let thread = Thread { [self] in
            ThreadName.set(SyncWatcher.threadName)  // for `ps -L`, and the benchmark, which counts its wake-ups
            run()
            finished.lock()
            hasFinished = true
            finished.broadcast()
            finished.unlock()
        }
        thread.start()
    }

    /// Stops watching; returns once the watcher's thread is done with the store.
    /// The journal is not kept any more: nobody would hear another process ask for it.
    public func stop() {
        store.journal.stopLeasing()
        stopping.store(true, ordering: .releasing)
        stopSignal?.signal()
        finished.lock()
        while !hasFinished { finished.wait() }
        finished.unlock()
    }

    /// Watches the sync directory, its devices folder and every device's
    /// folder, this device's own included (its other processes write there).
    /// Called after every wake-up but those for the own folder alone, so that
    /// a folder that appeared (a new device) or was made again is watched before the refresh reads it;
    /// adding a watch that exists is a no-op. The folders are the ones the
    /// store reads, below the sync directory it holds (``HeldFolder``), even
    /// once its path names another.
    private func watchFolders() {
        guard let inotify else { return }
        let root = store.sync.root.stablePath
        let devices = root + "/devices"
        let changes = Self.changes
        // A folder that is not there (yet) is not watched: the next wake-up or poll tries again.
        _ = try? inotify.watch(root, for: changes)  // the user's path: a link to the folder is theirs
        // Below it, as the store reads: `devices` and the device folders it lists, never a link.
        let status = ((try? store.sync.devicesFolder()) ?? nil)?.status.map(FolderSurvey.FileStamp.init)
        guard status == nil || watchedDevices.withLock({ watched in
            defer { watched = status.flatMap { FolderSurvey.now() - $0.changed > FolderSurvey.settling ? $0 : nil } }
            return watched != status
        }) else { return }
        for path in [devices] + store.sync.devices().map({ devices + "/" + $0.hex }) {
            _ = try? inotify.watch(path, for: changes.union([.dontFollow, .onlyDirectory]))
        }
        watchOwnFolder(leased: store.journal.isLeasedNow)  // its events are the lease's to say
    }

    /// The events a folder is watched for.
    private static let changes: Inotify.Events = [.create, .modify, .closeWrite, .movedTo, .delete, .movedFrom]

    /// Watches this device's own folder: for appends (`IN_MODIFY`) only
    /// while another process of the device may append, that is unless this
    /// one keeps the journal (`leased`): its own appends wake nobody then.
    /// Called as the lease is taken, and before it is let go.
    private func watchOwnFolder(leased: Bool) {
        guard let inotify else { return }
        let events = (leased ? Self.changes.subtracting(.modify) : Self.changes).union([.dontFollow, .onlyDirectory])
        let own = try? inotify.watch(store.sync.root.stablePath + "/devices/" + store.deviceID.hex, for: events)
        ownWatch.store(own?.rawValue ?? -1, ordering: .relaxed)
    }

    /// What the events queued were of.
    private struct Events {
        /// This device's own folder (its other processes' appends), `journal.ask` (another process asks for the
        /// journal), anything else (another device's folder, an overflow of the queue).
        var own = false, asked = false, others = false
    }

    /// Reads the events queued, and says what they were of.
    private func drainEvents(_ inotify: Inotify, into buffer: inout [UInt8]) -> Events {
        let own = ownWatch.load(ordering: .relaxed), ask = askWatch.load(ordering: .relaxed)
        var result = Events()
        while true {
            let events = (try? inotify.read(into: &buffer)) ?? []
            guard !events.isEmpty else { return result }
            for event in events {
                let watch = event.watch.rawValue
                if watch >= 0 && watch == own {
                    result.own = true
                } else if watch >= 0 && watch == ask {
                    result.asked = true
                } else {
                    result.others = true
                }
            }
        }
    }

    /// The watcher thread's name, as the kernel knows it (at most 15 bytes).
    static let threadName = "kvfs-watcher"

    private func run() {
        // A missing descriptor (-1) is one poll skips.
        var descriptors: [(descriptor: FileDescriptor, events: PollEvents)] = [(stopSignal?.descriptor ?? FileDescriptor(rawValue: -1), .readable)]
        if let inotify { descriptors.append((inotify.descriptor, .readable)) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var lastRefresh = Date()
        while true {
            _ = try? Poll.wait(for: descriptors, timeout: .seconds(pollInterval))
            if stopping.load(ordering: .acquiring) { return }
            if let inotify {
                let events = drainEvents(inotify, into: &buffer)  // one refresh covers every event
                if events.asked { store.journal.release() }  // first: another process waits
                // Polling goes on meanwhile: the own folder's events may come faster than the interval.
                // No other folder can have appeared (that is an event of `devices`): none to watch.
                if (events.own || events.asked) && !events.others && Date().timeIntervalSince(lastRefresh) < pollInterval {
                    if events.own { store.refreshOwnFolder() }
                    continue
                }
                watchFolders()
            }
            store.refresh(onlyChangedFolders: inotify != nil)  // the folders' status is current where inotify works
            lastRefresh = Date()
        }
    }
}
