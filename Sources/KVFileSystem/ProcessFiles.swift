import LinuxSystem
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Which files a process has open, as `/proc` tells: how a `flush` learns
/// whether the close it reports is the file's last one in that process.
///
/// FUSE sends `FLUSH` for every `close(2)`, also of one of several
/// descriptors sharing an open file. A shell's `> k` opens the key, moves the
/// descriptor to standard output with `dup2` and closes the original — a
/// `FLUSH` before the command has written a byte. Committing that bare
/// truncation would lose the old value when the command's write is then
/// refused (a refused write leaves the old value: docs/close-commit.md
/// § Refused writes); not committing a bare truncation at all would let
/// `: > k` wait for `RELEASE`, which the kernel sends after `close()` has
/// returned (every close commits: docs/close-commit.md § The last close).
/// So a bare truncation is committed at the close after which the closing
/// process holds the file open for writing nowhere else.
///
/// When `/proc` cannot tell (see ``Answer/cannotTell(_:)``), the answer is
/// not "holds nothing": a refusal must never empty a key, so the bare
/// truncation then waits for `RELEASE`. Each reason is logged once.
///
/// Nothing here touches the mount (only `/proc`), so it never sends FUSE a
/// request and can run inside one.
final class ProcessFiles: Sendable {
    /// What `/proc` says of a process and a file.
    enum Answer: Equatable {
        /// The process has the file open for writing at some descriptor.
        case holds
        /// It has not.
        case holdsNothing
        /// `/proc` cannot tell.
        case cannotTell(Reason)
    }

    /// Why `/proc` cannot tell whether a process holds a file.
    enum Reason: Hashable {
        /// The mount was not found in the daemon's own mount table.
        case mountNotFound(String)
        /// The request came from a process outside the daemon's pid
        /// namespace: FUSE gives its pid as 0.
        case outsidePidNamespace
        /// The process's `/proc/PID/fdinfo` (or mount table) cannot be read:
        /// another user's process under `allow_other` for a daemon that is not
        /// root, a non-dumpable process, `/proc` mounted with `hidepid`; or
        /// the thread that opened the file has exited.
        case unreadable(SystemCallError)
        /// This kernel writes no `ino:` line in fdinfo (before Linux 5.1).
        case noInodeLine

        /// One line for the log: what cannot be told, and what kvfs does instead.
        var message: String {
            let cause = switch self {
            case .mountNotFound(let path): "\(path) is not in the daemon's mount table (/proc/self/mountinfo)"
            case .outsidePidNamespace: "a process outside the daemon's pid namespace closed a key (FUSE gives its pid as 0)"
            case .unreadable(let error): "/proc cannot be read: \(error) (another user's process, a non-dumpable one, hidepid, or a thread that has exited)"
            case .noInodeLine: "this kernel writes no ino: line in /proc/PID/fdinfo"
            }
            return "kvfs cannot tell from /proc whether a close is the writer's last: \(cause); "
                + "a truncation with nothing written yet (> k) is committed at the file's release, just after the last close, not at each close"
        }

        /// The kind, without its details: what is logged once.
        var kind: Int {
            switch self {
            case .mountNotFound: 0
            case .outsidePidNamespace: 1
            case .unreadable: 2
            case .noInodeLine: 3
            }
        }
    }

    private static let logger = Logger(label: "kvfs.daemon")

    /// The mount's device, as mountinfo shows it; nil when it was not found.
    private let device: DeviceNumber?
    /// Where the mount is, for messages.
    private let mountPoint: String
    /// The mount ids known to be mounts of this filesystem, so that a
    /// process's mount table is read once per id, not once per close. Only
    /// "ours" is kept: a mount id is reused once its mount is gone, and a
    /// stale "not ours" would let a close commit a bare truncation.
    private let ourMounts = Mutex<Set<Int>>([])
    /// The kinds of ``Reason`` already logged.
    private let said = Mutex<Set<Int>>([])

    /// Finds the device of the kvfs mount at `mountPoint`, a path with its
    /// links resolved (as mountinfo names it), in this process's mount table.
    init(mountPoint: String) {
        self.mountPoint = mountPoint
        let table = (try? ProcessFolder.current.mounts()) ?? []
        device = table.last(where: { $0.mountPoint == mountPoint && $0.type == "fuse.kvfs" })?.device
    }

    /// Whether the bare truncation of `inode`, closed by `closer`, must wait
    /// for `RELEASE`: when the closer, or `opener` (the process that opened
    /// it, if another), still holds it open for writing, or when `/proc`
    /// cannot tell (logged once per kind of reason).
    func mustWait(_ inode: UInt64, closer: pid_t, opener: pid_t) -> Bool {
        var answer = holding(inode, pid: closer)
        if answer == .holdsNothing && opener != closer && opener != 0 { answer = holding(inode, pid: opener) }
        switch answer {
        case .holds: return true
        case .holdsNothing: return false
        case .cannotTell(let reason):
            if said.withLock({ $0.insert(reason.kind).inserted }) { Self.logger.warning("\(reason.message)") }
            return true
        }
    }

    /// Whether process `pid` has `inode` of this mount open for writing at some descriptor.
    ///
    /// Standard output and error are looked at first: a shell's `> k` moves
    /// the file there before its bare close, so that close, the commonest one
    /// that must wait, is answered after reading one descriptor, not all.
    func holding(_ inode: UInt64, pid: pid_t) -> Answer {
        guard device != nil else { return .cannotTell(.mountNotFound(mountPoint)) }
        guard pid > 0 else { return .cannotTell(.outsidePidNamespace) }
        let process = ProcessFolder(pid: pid)
        let first: [Int32] = [1, 2]
        for descriptor in first {
            let answer = holding(inode, process: process, descriptor: descriptor)
            if answer != .holdsNothing { return answer }
        }
        let descriptors: [Int32]
        do { descriptors = try process.descriptors() } catch { return .cannotTell(.unreadable(error)) }
        for descriptor in descriptors where !first.contains(descriptor) {
            let answer = holding(inode, process: process, descriptor: descriptor)
            if answer != .holdsNothing { return answer }
        }
        return .holdsNothing
    }

    /// Whether `descriptor` of `process` is `inode` of this mount, open for writing.
    private func holding(_ inode: UInt64, process: ProcessFolder, descriptor: Int32) -> Answer {
        let info: DescriptorInfo
        do {
            info = try process.descriptorInfo(descriptor)
        } catch where error.errno == .noSuchFileOrDirectory {
            return .holdsNothing  // no such descriptor (a process that is gone fails when its folder is listed)
        } catch {
            return .cannotTell(.unreadable(error))
        }
        guard let fileInode = info.inode else { return .cannotTell(.noInodeLine) }
        guard fileInode == inode, info.isWritable else { return .holdsNothing }
        // An inode number alone may be another filesystem's (a terminal's, say): check the mount.
        if ourMounts.withLock({ $0.contains(info.mountID) }) { return .holds }
        let table: [MountInfo]
        do { table = try process.mounts() } catch { return .cannotTell(.unreadable(error)) }
        guard let mount = table.first(where: { $0.id == info.mountID }), mount.device == device else { return .holdsNothing }
        ourMounts.withLock { _ = $0.insert(info.mountID) }
        return .holds
    }
}
