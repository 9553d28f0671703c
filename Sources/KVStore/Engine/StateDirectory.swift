import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A device's private folder (never in the sync directory): its id, the lock
/// that gives it to one process, the store id it joined, the stamps it last
/// saw (for InitialSyncChange), and its change log.
final class StateDirectory {
    let path: String
    private var lockDescriptor: Int32 = -1

    init(path: String) throws(KVStoreError) {
        self.path = path
        try Files.makeDirectory(path)
    }

    deinit { unlock() }

    var lockPath: String { path + "/lock" }
    var changeLogPath: String { path + "/changes.log" }

    /// Takes the folder for this process, or says who has it.
    ///
    /// A lock this process let go of a moment ago can still be held by a
    /// child it is spawning (the child's copy of the descriptor lives until
    /// its exec), so when the lock file names this process, taking the lock
    /// is tried again for half a second.
    func lock(owner: String) throws(KVStoreError) {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { throw Files.error(lockPath, "cannot open lock") }
        let deadline = Date().addingTimeInterval(0.5)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let holder = Self.holder(of: lockPath)
            if holder.map(Self.namesThisProcess) == true && Date() < deadline {
                usleep(5000)
                continue
            }
            close(fd)
            throw .stateDirectoryBusy(path: path, holder: holder ?? "another process")
        }
        lockDescriptor = fd
        recordOwner(owner)
    }

    /// Replaces what the lock file says about its holder (its pid, and a mount point once mounted).
    func recordOwner(_ owner: String) {
        guard lockDescriptor >= 0 else { return }
        ftruncate(lockDescriptor, 0)
        _ = try? Files.writeAll(lockDescriptor, Array("pid \(getpid()) \(owner)\n".utf8), path: lockPath)
    }

    func unlock() {
        if lockDescriptor >= 0 { close(lockDescriptor) }
        lockDescriptor = -1
    }

    /// Whether a lock file's text (`pid <pid> <owner>`) names this process.
    private static func namesThisProcess(_ holder: String) -> Bool {
        holder.split(separator: " ").dropFirst().first.map(String.init) == String(getpid())
    }

    /// What the lock file says about whoever holds it.
    static func holder(of lockPath: String) -> String? {
        guard let bytes = try? Files.read(lockPath), !bytes.isEmpty else { return nil }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// This device's id, created on first use.
    func deviceID() throws(KVStoreError) -> DeviceID {
        let file = path + "/device-id"
        if let bytes = try Files.read(file),
           let id = DeviceID(hex: String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) {
            return id
        }
        let id = DeviceID.random()
        try Files.writeAtomically(file, Array((id.hex + "\n").utf8))
        return id
    }

    /// The store id this device last served, if any.
    var rememberedStoreID: String? {
        get {
            guard let bytes = try? Files.read(path + "/store-id") else { return nil }
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        set { try? Files.writeAtomically(path + "/store-id", Array(((newValue ?? "") + "\n").utf8)) }
    }

    /// What this device showed when it last ran, or nil for a new device:
    /// the stamp of each visible key, and of each key the quota rule set aside.
    func seen() -> (visible: [String: Stamp], setAside: [String: Stamp])? {
        guard let bytes = try? Files.read(path + "/seen.log") else { return nil }
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        var seen: (visible: [String: Stamp], setAside: [String: Stamp]) = ([:], [:])
        for record in scan.records {
            switch record.operation {
            case let .remove(key): seen.visible[key] = record.stamp
            case let .put(key, _): seen.setAside[key] = record.stamp
            default: break
            }
        }
        return seen
    }

    /// Remembers what this device shows, as framed records (reusing the
    /// journal's format; only the stamps count): a visible key as a removal,
    /// a set-aside one as a put.
    func saveSeen(visible: [String: Stamp], setAside: [String: Stamp]) {
        var bytes: [UInt8] = []
        for (key, stamp) in visible { bytes += RecordFrame.encode(JournalRecord(stamp: stamp, operation: .remove(key: key))) }
        for (key, stamp) in setAside {
            bytes += RecordFrame.encode(JournalRecord(stamp: stamp, operation: .put(key: key, value: .bool(false))))
        }
        try? Files.writeAtomically(path + "/seen.log", bytes)
    }
}
