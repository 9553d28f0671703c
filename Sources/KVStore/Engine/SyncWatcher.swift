import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Calls a store's ``DeviceStore/refresh()`` when the sync directory changes:
/// at once through inotify where the kernel reports changes (local disks),
/// and every `pollInterval` in any case, which is all there is on NFS and
/// other folders whose changes come from elsewhere (`polling: true`).
public final class SyncWatcher: @unchecked Sendable {
    private let store: DeviceStore
    private let pollInterval: TimeInterval
    private let inotify: Int32
    private var watched: Set<String> = []
    private let stopPipe: [Int32]
    private var thread: Thread?

    /// Starts watching `store`'s sync directory.
    public init(store: DeviceStore, pollInterval: TimeInterval = 1, polling: Bool = false) {
        self.store = store
        self.pollInterval = pollInterval
        inotify = polling ? -1 : inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        var fds: [Int32] = [0, 0]
        pipe(&fds)
        stopPipe = fds
        watchFolders()
        let thread = Thread { [self] in run() }
        thread.name = "kvfs-sync-watcher"
        self.thread = thread
        thread.start()
    }

    deinit {
        if inotify >= 0 { close(inotify) }
        close(stopPipe[0])
        close(stopPipe[1])
    }

    /// Stops watching; returns once the watcher's thread is done with the store.
    public func stop() {
        var byte: UInt8 = 1
        write(stopPipe[1], &byte, 1)
        while thread?.isFinished == false { usleep(1000) }
    }

    /// Watches the sync directory, its devices folder and every device folder.
    private func watchFolders() {
        guard inotify >= 0 else { return }
        let root = store.syncDirectory.path
        let devices = root + "/devices"
        let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
        for path in [root, devices] + Files.list(devices).map({ devices + "/" + $0 }) where !watched.contains(path) {
            if inotify_add_watch(inotify, path, mask) >= 0 { watched.insert(path) }
        }
    }

    private func run() {
        var descriptors = [pollfd(fd: stopPipe[0], events: Int16(POLLIN), revents: 0)]
        if inotify >= 0 { descriptors.append(pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(pollInterval * 1000))
            if ready > 0 && descriptors[0].revents != 0 { return }
            if inotify >= 0 && descriptors.count > 1 && descriptors[1].revents != 0 {
                while read(inotify, &buffer, buffer.count) > 0 {}  // drain: one refresh covers every event
                watchFolders()
            }
            store.refresh()
        }
    }
}
