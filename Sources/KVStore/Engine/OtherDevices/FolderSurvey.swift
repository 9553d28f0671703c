import Foundation
import Synchronization
import SystemPackage

/// What the device folders of a sync directory show on disk: which are
/// there and, of each, its files' status, its progress, its name and when
/// its files last changed. The refresh reads only the folders whose files
/// changed since their reader last read them, and the status (with the
/// health check of the log) is made from a survey: both look at the disk
/// without the engine's lock, which reads and writes take.
///
/// A survey is incremental: a folder whose own status did not change holds
/// the same names, so only their status is looked at again (an empty folder
/// costs one `fstatat`), and `progress.json`, `device.json` and
/// `waiting.json` are read again only when theirs changed. A file written, replaced, grown or
/// touched changes its status (its inode, size, modification or status-change
/// time); on a network filesystem the status may lag behind the files, which
/// is why a store that polls a folder changed from elsewhere reads every
/// folder at each refresh (``DeviceStore/refresh(onlyChangedFolders:)``).
final class FolderSurvey: Sendable {
    /// What one device folder shows.
    struct Seen: Sendable, Equatable {
        /// The folder's own status, and each of its entries'.
        var fingerprint: Fingerprint
        /// Whether its names were listed more than ``settling`` after it
        /// last changed: a folder changed again within the same tick of the
        /// filesystem's clock keeps its times, so only then do its names
        /// stand for as long as its status does.
        var settled = false
        /// Its device's published reading progress (`progress.json`), if any can be read.
        var progress: ReadProgress?
        /// The name its device gave itself (`device.json`), if any may be shown.
        var name: String?
        /// What someone on its device waits to see read (`waiting.json`), if it asked, with when the file arrived.
        var waiting: WaitSignal?
        /// The newest status change (ctime) of its files, which a synchronizer cannot set back.
        var lastChange: Date?
    }

    /// A folder's status and its entries': equal while nothing in it changed.
    struct Fingerprint: Sendable, Equatable {
        var folder: FileStamp
        var entries: [String: FileStamp] = [:]
    }

    /// What changes when a file changes: which file it is, its size, and its times.
    struct FileStamp: Sendable, Equatable {
        let device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64

        init(_ status: Stat) {
            device = UInt64(status.deviceID.rawValue)
            inode = UInt64(status.inode.rawValue)
            size = status.size
            modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            changed = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
        }
    }

    /// How long after a folder's last change its listing is taken as final: many ticks of any filesystem's clock.
    static let settling: Int64 = 1_000_000_000

    private let sync: SyncDirectory
    /// The last survey's folders, which the next one starts from.
    private let last = Mutex<[DeviceID: Seen]>([:])

    init(sync: SyncDirectory) {
        self.sync = sync
    }

    /// The folders named like devices (folders themselves, not links), and
    /// what each shows now. Surveys may run at once (the refresh's and the
    /// status's): each starts from the latest one finished.
    func survey() -> [DeviceID: Seen] {
        let before = last.withLock { $0 }
        var folders: [DeviceID: Seen] = [:]
        if let devices = (try? sync.devicesFolder()) ?? nil {
            for name in devices.names() {
                guard let device = DeviceID(hex: name), let status = devices.entry(name), status.type == .directory else { continue }
                folders[device] = look(at: device, in: devices, status: FileStamp(status), before: before[device])
            }
        }
        last.withLock { $0 = folders }
        return folders
    }

    /// What the folder `name` of `devices` shows, its own status being `status`.
    private func look(at device: DeviceID, in devices: Folder, status: FileStamp, before: Seen?) -> Seen {
        let name = device.hex
        // Its names are the ones seen before while its own status is unchanged (and was settled then).
        let sameNames = before.map { $0.settled && $0.fingerprint.folder == status } ?? false
        if let before, sameNames && before.fingerprint.entries.isEmpty { return before }
        let settled = sameNames || Self.now() - status.changed > Self.settling
        guard let folder = (try? devices.folder(name)) ?? nil else { return Seen(fingerprint: Fingerprint(folder: status)) }
        var fingerprint = Fingerprint(folder: status)
        for entry in sameNames ? Array(before!.fingerprint.entries.keys) : folder.names() {
            if let stamp = folder.entry(entry).map(FileStamp.init) { fingerprint.entries[entry] = stamp }
        }
        if var before, before.fingerprint == fingerprint {
            before.settled = settled
            return before
        }
        func unchanged(_ file: String) -> Bool {
            before.map { $0.fingerprint.entries[file] == fingerprint.entries[file] } ?? false
        }
        // In a sealed store, the signed files read only when needed are checked as they change, so that one
        // planted there is named in the status at once (docs/sealed.md § Signed files).
        if sync.sealing != nil {
            for file in SignedFile.readWhenNeeded where fingerprint.entries[file] != nil && !unchanged(file) {
                _ = sync.folder(of: device).readSigned(file, in: folder)
            }
        }
        return Seen(
            fingerprint: fingerprint, settled: settled,
            progress: unchanged(ReadProgress.fileName) ? before?.progress : sync.progress(in: folder, of: device),
            name: unchanged(SyncDirectory.nameFile) ? before?.name : sync.name(in: folder, of: device),
            waiting: unchanged(WaitSignal.fileName) ? before?.waiting
                : sync.waitSignal(in: folder, of: device, arrived: fingerprint.entries[WaitSignal.fileName].map { Self.date($0.changed) }),
            lastChange: fingerprint.entries.values.map(\.changed).max().map(Self.date))
    }

    /// A file time (nanoseconds since 1970) as a date.
    private static func date(_ nanoseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(nanoseconds) / 1e9) }

    /// The time now, in nanoseconds since 1970, as file times are.
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1e9) }
}
