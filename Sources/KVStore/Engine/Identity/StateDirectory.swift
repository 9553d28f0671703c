import Foundation
import LinuxSystem
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A device's private folder (never in the sync directory): its id, the
/// locks that make the processes of one machine one device, the store id it
/// joined, the stamps it last saw (for InitialSyncChange), and its change log.
///
/// A device is a machine, not a process: every process that opens the store
/// with this folder (a mount, Swift programs, `kvfs set`) is the same device,
/// with one id and one journal, and each sees the others' writes as another
/// device's. They share it through `flock`s on files here, which the kernel
/// lets go of when a process ends, however it ends:
///
/// - `lock`, held shared by each process while it has the store open: a
///   process that finds nobody else holding it starts a new *session*, a
///   nonce in `session` with which every process of the session claims the
///   device's folder (``WriterClaim``). A copy of this folder (on another
///   machine, from a cloned disk) has a lock of its own, so it starts a
///   session of its own, and is caught as a second writer.
/// - `mount.lock`, held by a mount: one mount per state directory. Its text
///   says who (`pid 42 mount /home/me/kvfs`, then ` (closing)` while it
///   commits its last writes), for the busy error and for readers, which
///   wait for a closing mount and otherwise go through its control socket.
/// - `journal.lock`, held while a process appends to the journal, starts a
///   compaction, opens the store or joins (``journalLock``); a mount keeps
///   it between its writes while no other process asks for it, which one
///   does by closing `journal.ask` after opening it for writing (``OwnJournal``).
/// - `compaction.lock`, held for a whole compaction: one at a time (``compactionLock``).
/// - `primary.lock`, held by the one process that writes what only one may:
///   the change log, `seen.log`, `last-stamp` and the device's published
///   progress (``settlePrimary(beforeLettingGo:)``).
///
/// It is created 0700 (with missing parents, as the XDG base-directory spec
/// asks), its files 0600, and nothing in it is opened through a link (see
/// ``Folder``). Opened read-only, it is neither created nor written.
final class StateDirectory: Sendable {
    let path: String
    /// The folder; nil when opened read-only and it does not exist.
    private let folder: Folder?
    /// Held while this device's journal grows or changes segment, so that its
    /// processes append one at a time, each after reading what the others
    /// appended; nil when opened read-only.
    let journalLock: FileLock?
    /// Held for a whole compaction, so that the device's processes compact
    /// one at a time; nil when opened read-only.
    let compactionLock: FileLock?
    private let holding = Mutex(Holding())

    /// This process's hold on the device.
    private struct Holding {
        /// `lock`, held shared while this process is one of the device's.
        var deviceLock: FileLock?
        /// `mount.lock`, while this process is the device's mount.
        var mountLock: FileLock?
        /// `primary.lock`, opened on joining; held while ``isPrimary``.
        var primaryLock: FileLock?
        var isPrimary = false
        /// What this process is, as a mount's lock file says (`mount <mount point>`).
        var owner = ""
    }

    init(path: String, readOnly: Bool = false) throws(KVStoreError) {
        self.path = path
        let folder = try Folder.open(path, create: !readOnly, writable: !readOnly)
        self.folder = folder
        folder?.removeStaleTemporaries()
        if let folder, !readOnly {
            try folder.openFile(Self.askName, .writeOnly, options: [.create]).map { try? $0.close() }  // for a mount to watch
            journalLock = try FileLock("journal.lock", in: folder) {
                // Asks a mount that keeps the journal to let go of it: its watcher sees the file closed after writing.
                try? folder.openFile(Self.askName, .writeOnly).map { try? $0.close() }
            }
            compactionLock = try FileLock("compaction.lock", in: folder)
        } else {
            (journalLock, compactionLock) = (nil, nil)
        }
    }

    deinit { unlock() }

    var changeLogPath: String { path + "/changes.log" }

    /// The file a process closes after opening it for writing to ask for the journal's lock (``OwnJournal``).
    static let askName = "journal.ask"

    /// The path of the file that asks for the journal's lock, for a mount's watcher.
    var askPath: String { path + "/" + Self.askName }

    /// What a copy of this folder does not carry: its inode number, which a
    /// copy (`cp -r`, a restore elsewhere) gets anew and a rename keeps (0: unknown).
    var inode: UInt64 { folder?.inode ?? 0 }

    /// Whether `owner` (what a process tells others about itself) is a mount: `mount <mount point>`.
    static func isMount(_ owner: String) -> Bool { owner.hasPrefix("mount ") }

    /// Makes this process one of the device's, until ``unlock()``, and
    /// returns the nonce of the session it joined, or started when no other
    /// process has the store open. A mount also takes `mount.lock`, or says
    /// who has it, and becomes the primary, waiting up to 3 s for a program
    /// that is the primary to step down (programs look every second).
    func join(owner: String) throws(KVStoreError) -> String {
        let folder = try writableFolder()
        if Self.isMount(owner) {
            // Non-nil: a lock file is created when missing.
            let mountLock = try FileLock("mount.lock", in: folder)!
            try take(mountLock, .exclusive)
            holding.withLock { $0.mountLock = mountLock }
        }
        recordOwner(owner)
        let deviceLock = try FileLock("lock", in: folder)!
        // Under the journal's lock: two processes starting at once must not both start a session.
        let nonce = try journalLock!.exclusively { () throws(KVStoreError) -> String in
            guard deviceLock.tryLock(.exclusive) else {
                try take(deviceLock, .shared)
                if let nonce = session() { return nonce }
                return try startSession(in: folder)
            }
            deviceLock.write("")  // what the last process said as it closed
            let nonce = try startSession(in: folder)
            // No process of this version comes between: each takes the journal's lock first.
            guard deviceLock.tryLock(.shared) else { throw .stateDirectoryBusy(path: path, holder: deviceLock.text() ?? "another process") }
            return nonce
        }
        let primaryLock = try FileLock("primary.lock", in: folder)
        holding.withLock { holding in (holding.deviceLock, holding.primaryLock) = (deviceLock, primaryLock) }
        let deadline = Date().addingTimeInterval(Self.isMount(owner) ? 3 : 0)
        while !settlePrimary(beforeLettingGo: {}) && Date() < deadline { usleep(10_000) }
        return nonce
    }

    /// The nonce of the session running, as `session` says.
    private func session() -> String? {
        guard let bytes = try? folder?.read("session", limit: 64) else { return nil }
        let nonce = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return nonce.isEmpty ? nil : nonce
    }

    private func startSession(in folder: Folder) throws(KVStoreError) -> String {
        let nonce = WriterClaim.newNonce()
        try folder.writeAtomically("session", Array((nonce + "\n").utf8))
        return nonce
    }

    /// Whether this process is the device's primary, the one that writes the
    /// change log, `seen.log`, `last-stamp` and the device's progress: the
    /// mount when one runs (it shows the change log as `.kvfs/changes.log`),
    /// else the first process to look; settled anew at each call (every
    /// second): a program that is the primary steps down once a mount runs,
    /// calling `beforeLettingGo` first, and another takes over once the
    /// primary has gone.
    @discardableResult
    func settlePrimary(beforeLettingGo: () -> Void) -> Bool {
        holding.withLock { holding in
            guard let primaryLock = holding.primaryLock else { return false }
            if holding.mountLock != nil {
                if !holding.isPrimary { holding.isPrimary = primaryLock.tryLock() }
            } else if isMounted() {
                if holding.isPrimary {
                    beforeLettingGo()
                    primaryLock.unlock()
                    holding.isPrimary = false
                }
            } else if !holding.isPrimary {
                holding.isPrimary = primaryLock.tryLock()
            }
            return holding.isPrimary
        }
    }

    /// Whether this process is the device's primary (``settlePrimary(beforeLettingGo:)``).
    var isPrimary: Bool { holding.withLock { $0.isPrimary } }

    /// Whether a mount holds the device.
    private func isMounted() -> Bool {
        guard let folder, let mountLock = (try? FileLock("mount.lock", in: folder, create: false)) ?? nil else { return false }
        guard mountLock.tryLock(.shared) else { return true }
        mountLock.unlock()
        return false
    }

    /// For a reader, which takes no lock: throws as a second mount would while
    /// a mount holds the device (so the command line goes through it), after
    /// waiting as long as a mount would for a mount going away.
    func checkNotMounted() throws(KVStoreError) {
        guard let folder, let mountLock = try FileLock("mount.lock", in: folder, create: false) else { return }
        try take(mountLock, .shared)
        mountLock.unlock()
    }

    /// Takes `lock` in `mode`, waiting while its holder's ``patience(with:)``
    /// lasts, as the lock file's text names the holder; throws who holds it after that.
    ///
    /// Whatever the text says, a holder is waited for 0.1 s: programs and
    /// readers look whether a mount runs by taking `mount.lock` shared for a
    /// moment (``isMounted()``), and the text then names the last mount, which
    /// may have been killed without a word.
    private func take(_ lock: FileLock, _ mode: FileLock.Mode) throws(KVStoreError) {
        let start = Date()
        while !lock.tryLock(mode) {
            let holder = lock.text()
            guard Date().timeIntervalSince(start) < max(Self.patience(with: holder), 0.1) else {
                throw .stateDirectoryBusy(path: path, holder: holder ?? "another process")
            }
            usleep(5000)
        }
    }

    /// How many seconds a held lock is waited for, by what its lock file says of the holder.
    ///
    /// - A holder that has said it is closing (``recordClosing()``: an
    ///   unmounted daemon committing its last writes; the last process of a
    ///   device doing its closing work) lets go once its last fsync is done:
    ///   up to 30 s on a loaded machine and a slow disk, so `umount m && kvfs get k` just works.
    /// - This process: a lock it let go of a moment ago can still be held by
    ///   a child it is spawning (the child's copy of the descriptor lives
    ///   until its exec), up to 5 s on a loaded machine.
    /// - Anyone else holds the folder for good: not waited for.
    static func patience(with holder: String?) -> TimeInterval {
        guard let holder else { return 0 }
        if holder.hasSuffix(closingMark) { return 30 }
        return namesThisProcess(holder) ? 5 : 0
    }

    /// What ends the lock file's text once its holder is closing.
    private static let closingMark = " (closing)"

    /// Replaces what the mount's lock file says about it (its pid, and the mount point).
    func recordOwner(_ owner: String) {
        holding.withLock { holding in
            holding.owner = owner
            holding.mountLock?.write(Self.holderText(owner))
        }
    }

    /// Tells processes waiting for the mount's lock that it is letting go of it.
    func recordClosing() {
        holding.withLock { holding in holding.mountLock?.write(Self.holderText(holding.owner + Self.closingMark)) }
    }

    private static func holderText(_ owner: String) -> String { "pid \(getpid()) \(owner)\n" }

    /// Where the store is mounted, as what holds the folder says.
    var mountPoint: String? {
        let owner = holding.withLock { $0.owner }
        return Self.isMount(owner) ? String(owner.dropFirst("mount ".count)) : nil
    }

    /// Whether this process is the device's last, about to close: then it
    /// holds `lock` alone from now on (its text says it is closing, so that a
    /// process opening the store waits for it) and is the primary, for the
    /// device's closing work; ``unlock()`` lets go. Called in the process's
    /// turn at the journal (``OwnJournal``), which orders its threads around the journal's lock.
    func isLastToClose() -> Bool {
        guard let deviceLock = holding.withLock({ $0.deviceLock }), let journalLock else { return false }
        let isLast = (try? journalLock.exclusively { () throws(KVStoreError) -> Bool in
            // A process joining takes the journal's lock to look for others: it waits, or finds this one.
            guard deviceLock.tryLock(.exclusive) else { return false }
            deviceLock.write(Self.holderText(holding.withLock { $0.owner } + Self.closingMark))
            return true
        }) ?? false
        return isLast && settlePrimary(beforeLettingGo: {})
    }

    /// Lets go of the device.
    func unlock() {
        holding.withLock { holding in
            (holding.mountLock, holding.primaryLock, holding.deviceLock, holding.isPrimary) = (nil, nil, nil, false)
        }
    }

    /// Whether a lock file's text (`pid <pid> <owner>`) names this process.
    private static func namesThisProcess(_ holder: String) -> Bool {
        holder.split(separator: " ").dropFirst().first.map(String.init) == String(getpid())
    }

    /// This device's id, created on first use. Read-only, a folder without
    /// one gets an id for this process alone, which nothing records.
    func deviceID() throws(KVStoreError) -> DeviceID {
        if let bytes = try folder?.read("device-id"),
           let id = DeviceID(hex: String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) {
            return id
        }
        guard folder?.isWritable == true else { return DeviceID.random() }
        return try newDeviceID()
    }

    /// Gives this folder a new device id (it was found to be a copy of another device's folder).
    func newDeviceID() throws(KVStoreError) -> DeviceID {
        let id = DeviceID.random()
        try writableFolder().writeAtomically("device-id", Array((id.hex + "\n").utf8))
        return id
    }

    /// The store id this device last served, if any.
    var rememberedStoreID: String? {
        get {
            guard let bytes = try? folder?.read("store-id") else { return nil }
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        set { try? folder?.writeAtomically("store-id", Array(((newValue ?? "") + "\n").utf8)) }
    }

    /// The latest stamp this device wrote, as it last noted it: its clock
    /// starts past it even when its folder in the sync directory is gone.
    var lastOwnStamp: HLCTimestamp? {
        get {
            guard let bytes = try? folder?.read("last-stamp") else { return nil }
            return UInt64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)).map(HLCTimestamp.init)
        }
        set { try? folder?.writeAtomically("last-stamp", Array(((newValue.map { String($0.rawValue) } ?? "") + "\n").utf8)) }
    }

    /// What this device showed when it last ran, or nil for a new device:
    /// the stamp of each visible key, and of each key the quota rule set aside.
    func seen() -> (visible: [StoreKey: Stamp], setAside: [StoreKey: Stamp])? {
        guard let bytes = try? folder?.read("seen.log") else { return nil }
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        var seen: (visible: [StoreKey: Stamp], setAside: [StoreKey: Stamp]) = ([:], [:])
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
    func saveSeen(visible: [StoreKey: Stamp], setAside: [StoreKey: Stamp]) {
        var bytes: [UInt8] = []
        for (key, stamp) in visible { bytes += RecordFrame.encode(JournalRecord(stamp: stamp, operation: .remove(key: key))) }
        for (key, stamp) in setAside {
            bytes += RecordFrame.encode(JournalRecord(stamp: stamp, operation: .put(key: key, value: .bool(false))))
        }
        try? folder?.writeAtomically("seen.log", bytes)
    }

    /// The store whose folder this device has written sealed (`sealed-store`): once it has, plain records
    /// found at the start of its folder are a writer's without keys, refused, never sealed as its own
    /// (docs/sealed.md § Converting a store).
    var sealedStoreID: String? {
        get { (try? folder?.read("sealed-store")).map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) } }
        set { try? folder?.writeAtomically("sealed-store", Array(((newValue ?? "") + "\n").utf8)) }
    }

    /// How far this device had read each sealed folder of the store `storeID` (``ReadMark``), as it last noted it.
    func readMarks(storeID: String) -> [DeviceID: ReadMark] {
        guard let bytes = try? folder?.read(ReadMark.fileName) else { return [:] }
        return ReadMark.decode(bytes, storeID: storeID)
    }

    /// Notes how far this device has read each sealed folder of the store `storeID`.
    func saveReadMarks(_ marks: [DeviceID: ReadMark], storeID: String) {
        try? folder?.writeAtomically(ReadMark.fileName, ReadMark.encode(marks, storeID: storeID))
    }

    /// The signed files this device took in a sealed store, as ``SignedFileLedger`` keeps them (`signed-files`).
    var signedFiles: [UInt8]? {
        get { (try? folder?.read(SignedFileLedger.fileName)) ?? nil }
        set { try? folder?.writeAtomically(SignedFileLedger.fileName, newValue ?? []) }
    }

    private func writableFolder() throws(KVStoreError) -> Folder {
        guard let folder, folder.isWritable else { throw .readOnly(path: path) }
        return folder
    }
}
