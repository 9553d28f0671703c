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
    private let inotify: Int32
    /// Wakes the thread to stop; nil when no pipe could be made (out of
    /// descriptors), and then the thread sees ``stopping`` at its next poll.
    private let stopPipe: (readEnd: FileDescriptor, writeEnd: FileDescriptor)?
    private let stopping = Atomic<Bool>(false)
    /// Whether the watcher's thread is done with the store.
    private let finished = Atomic(false)
    /// The watch on this device's own folder: its events, which the device's
    /// other processes' writes cause, need only that folder read.
    private let ownWatch = Atomic<Int32>(-1)
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
        inotify = polling ? -1 : inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        let refused = !polling && inotify < 0
        self.pollInterval = max(refused ? min(pollInterval, 1) : pollInterval, 0.001)
        if refused {
            DeviceStore.printWarning("cannot watch \(store.syncDirectory.path) with inotify (\(String(cString: strerror(errno)))): "
                + "noticing other devices' changes by polling every \(self.pollInterval) s instead; "
                + "to get them at once, raise fs.inotify.max_user_instances (sysctl) and remount")
        }
        stopPipe = try? FileDescriptor.pipe(options: .closeOnExec)
        watchFolders()
        let thread = Thread { [self] in
            ThreadName.set(SyncWatcher.threadName)  // for `ps -L`, and the benchmark, which counts its wake-ups
            run()
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    deinit {
        if inotify >= 0 { close(inotify) }
        try? stopPipe?.readEnd.close()
        try? stopPipe?.writeEnd.close()
    }

    /// Stops watching; returns once the watcher's thread is done with the store.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        _ = try? stopPipe?.writeEnd.writeAll([1])
        while !finished.load(ordering: .acquiring) { usleep(1000) }
    }

    /// Watches the sync directory, its devices folder and every device's
    /// folder, this device's own included (its other processes write there).
    /// Called after every wake-up but those for the own folder alone, so that
    /// a folder that appeared (a new device) or was made again is watched before the refresh reads it;
    /// adding a watch that exists is a no-op. The folders are the ones the
    /// store reads, below the sync directory it holds (``HeldFolder``), even
    /// once its path names another.
    private func watchFolders() {
        guard inotify >= 0 else { return }
        let root = store.sync.root.stablePath
        let devices = root + "/devices"
        let changes = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
        _ = inotify_add_watch(inotify, root, changes)  // the user's path: a link to the folder is theirs
        // Below it, as the store reads: `devices` and the device folders it lists, never a link.
        let status = ((try? store.sync.devicesFolder()) ?? nil)?.status.map(FolderSurvey.FileStamp.init)
        guard status == nil || watchedDevices.withLock({ watched in
            defer { watched = status.flatMap { FolderSurvey.now() - $0.changed > FolderSurvey.settling ? $0 : nil } }
            return watched != status
        }) else { return }
        let folders = store.sync.devices().filter { $0 != store.deviceID }.map { devices + "/" + $0.hex }
        for path in [devices] + folders {
            _ = inotify_add_watch(inotify, path, changes | UInt32(IN_DONT_FOLLOW) | UInt32(IN_ONLYDIR))
        }
        let own = inotify_add_watch(inotify, devices + "/" + store.deviceID.hex, changes | UInt32(IN_DONT_FOLLOW) | UInt32(IN_ONLYDIR))
        ownWatch.store(own, ordering: .relaxed)
    }

    /// Reads the events queued, and says whether every one is of this
    /// device's own folder (an overflow of the queue is not).
    private func drainEvents(into buffer: inout [UInt8]) -> (any: Bool, ownOnly: Bool) {
        let own = ownWatch.load(ordering: .relaxed)
        var result = (any: false, ownOnly: true)
        while true {
            let count = read(inotify, &buffer, buffer.count)
            guard count > 0 else { return result }
            result.any = true
            var offset = 0
            // Each event: wd (Int32), mask, cookie, len (UInt32 each), then `len` bytes of name.
            while offset + 16 <= count {
                let (watch, nameLength) = buffer.withUnsafeBytes { bytes in
                    (bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                     Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                if watch != own || own < 0 { result.ownOnly = false }
                offset += 16 + nameLength
            }
        }
    }

    /// The watcher thread's name, as the kernel knows it (at most 15 bytes).
    static let threadName = "kvfs-watcher"

    /// How long the own folder's events settle before it is looked at: a
    /// process appending in a loop (a write every 0.1 ms) wakes the watcher
    /// once per this, and another process's write shows here this much later.
    static let ownSettling: TimeInterval = 0.005

    /// Waits ``ownSettling`` unless told to stop (`stop`, the stop pipe's
    /// poll entry); returns whether to stop.
    private func settle(_ stop: pollfd) -> Bool {
        var stopOnly = [stop]
        _ = poll(&stopOnly, 1, Int32(Self.ownSettling * 1000))
        return stopping.load(ordering: .acquiring)
    }

    private func run() {
        // poll(2) and inotify have no swift-system wrappers.
        var descriptors = [pollfd(fd: stopPipe?.readEnd.rawValue ?? -1, events: Int16(POLLIN), revents: 0)]
        if inotify >= 0 { descriptors.append(pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var lastRefresh = Date()
        while true {
            _ = poll(&descriptors, nfds_t(descriptors.count), Int32(pollInterval * 1000))
            if stopping.load(ordering: .acquiring) { return }
            if inotify >= 0 {
                var events = drainEvents(into: &buffer)  // one refresh covers every event
                if events.any && events.ownOnly {
                    // Each of this process's own appends is such an event: a burst of them settles
                    // first, and costs one look at the folder instead of a wake-up (and a wait for the
                    // store's lock, which the write still holds) each.
                    if settle(descriptors[0]) { return }
                    events.ownOnly = drainEvents(into: &buffer).ownOnly
                }
                // Polling goes on meanwhile: the own folder's events may come faster than the interval.
                // No other folder can have appeared (that is an event of `devices`): none to watch.
                if events.any && events.ownOnly && Date().timeIntervalSince(lastRefresh) < pollInterval {
                    store.refreshOwnFolder()
                    continue
                }
                watchFolders()
            }
            store.refresh(onlyChangedFolders: inotify >= 0)  // the folders' status is current where inotify works
            lastRefresh = Date()
        }
    }
}
