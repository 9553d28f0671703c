import Foundation
import Testing
@testable import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18 item 2: anything planted at a name the store writes its
/// temporary files under (a folder, a FIFO, a socket, a link, a device node)
/// is stepped around or removed, never fatal. Anyone who can write the sync
/// directory can plant one in a device's folder.
@Suite("Things planted at the store's temporary names")
struct PlantedTemporaryTests {
    /// What can be planted under a name.
    enum Planted: String, CaseIterable, Sendable {
        case folder, fullFolder, fifo, unixSocket, link, deviceNode

        /// Plants it at `path`; a link points to `victim`.
        func plant(at path: String, victim: String) throws {
            let made: Int32 = switch self {
            case .folder: mkdir(path, 0o700)
            case .fullFolder: mkdir(path, 0o700) == 0 ? mkdir(path + "/inside", 0o700) : -1
            case .fifo: mkfifo(path, 0o600)
            case .unixSocket: Self.bindSocket(at: path)
            case .link: symlink(victim, path)
            case .deviceNode: mknod(path, S_IFCHR | 0o600, 0x103)  // 1, 3: /dev/null
            }
            if made != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }

        /// A Unix socket bound at `path` (its descriptor closed: the name stays).
        private static func bindSocket(at path: String) -> Int32 {
            var address = sockaddr_un()
            guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
                errno = ENAMETOOLONG
                return -1
            }
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
            }
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
    }

    /// Every name the store wrote its temporary files under before they had
    /// a name of their own per write: `.<file>.tmp` beside each file it replaces.
    static func fixedTemporaryNames(folder: String, state: String, sync: String) -> [String] {
        [".writer.json.tmp", ".device.json.tmp", ".progress.json.tmp", ".adopted.json.tmp",
         "." + DeviceFolder.snapshotName(2) + ".tmp"].map { folder + "/" + $0 }
            + [".store-id.tmp", ".last-stamp.tmp", ".seen.log.tmp", ".changes.log.tmp", ".device-id.tmp"].map { state + "/" + $0 }
            + [sync + "/.store-id.tmp"]
    }

    @Test("at every temporary name in the device's folder and the state directory: the store opens, writes, compacts, renames its device and closes; a link's target keeps its bytes",
          arguments: Planted.allCases)
    func plantedAtEveryTemporaryName(_ planted: Planted) throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        var store = try openStore(root, device: "a")
        try store.set(.integer(1), forKey: "k")
        let folder = root.sub("sync/devices/\(store.deviceID.hex)").path
        store.close()
        let victim = root.sub("victim").path
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: victim))
        let names = Self.fixedTemporaryNames(folder: folder, state: root.sub("state-a").path, sync: root.sub("sync").path)
        for name in names { try planted.plant(at: name, victim: victim) }

        // device.json (a new name), writer.json, a write, a compaction, then progress, last-stamp and seen.log at close.
        store = try DeviceStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("state-a"), deviceName: "renamed", warn: { _ in })
        try store.set(.integer(2), forKey: "k")
        store.compact()
        try store.set(.integer(3), forKey: "j")
        store.close()
        store = try openStore(root, device: "a")
        defer { store.close() }
        #expect(store.values == ["k": .integer(2), "j": .integer(3)])
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(FileManager.default.fileExists(atPath: folder + "/" + DeviceFolder.snapshotName(2)), "the compaction wrote its snapshot")
        let leftovers = Files.list(folder).filter { Folder.isTemporaryName($0) }
        #expect(leftovers.isEmpty, "every write renamed its temporary file into place: \(leftovers)")
    }

    @Test("a temporary file a crash left (a file, a link, a FIFO, an empty folder) is removed when the store opens; a full folder, one being written now and a synchronizer's are left")
    func staleTemporariesAreRemoved() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        var store = try openStore(root, device: "a")
        let folder = root.sub("sync/devices/\(store.deviceID.hex)").path, state = root.sub("state-a").path
        store.close()
        let victim = root.sub("victim").path
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: victim))
        let old = Date().addingTimeInterval(-2 * Folder.staleTemporaryAge)
        var stale: [String] = [], kept: [String] = []
        for (base, kind) in [(folder, Planted.link), (folder, .fifo), (folder, .folder), (state, .link), (state, .unixSocket)] {
            let path = base + "/" + Folder.temporaryName(for: "progress.json")
            try kind.plant(at: path, victim: victim)
            try age(path, to: old)
            stale.append(path)
        }
        let file = state + "/" + Folder.temporaryName(for: "seen.log")
        try Data("half written".utf8).write(to: URL(fileURLWithPath: file))
        try age(file, to: old)
        stale.append(file)
        let full = folder + "/" + Folder.temporaryName(for: "device.json")
        try Planted.fullFolder.plant(at: full, victim: victim)
        try age(full, to: old)
        let fresh = folder + "/" + Folder.temporaryName(for: "writer.json")
        try Data("being written".utf8).write(to: URL(fileURLWithPath: fresh))
        let synchronizers = folder + "/.syncthing.journal-0000000000000001.log.tmp"
        try Data("arriving".utf8).write(to: URL(fileURLWithPath: synchronizers))
        try age(synchronizers, to: old)
        kept = [full, fresh, synchronizers]

        store = try openStore(root, device: "a")
        defer { store.close() }
        for path in stale { #expect(!exists(path), "\(path) stayed") }
        for path in kept { #expect(exists(path), "\(path) was removed") }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    }

    @Test("a temporary name is the file's, a mark of the store's and 16 hex digits: new for each write")
    func temporaryNames() {
        let name = Folder.temporaryName(for: "progress.json")
        #expect(name.hasPrefix(".progress.json.kvfs-") && name.hasSuffix(".tmp") && name.utf8.count == ".progress.json.kvfs-".utf8.count + 16 + 4)
        #expect(Folder.isTemporaryName(name) && name != Folder.temporaryName(for: "progress.json"))
        for other in [".progress.json.tmp", ".syncthing.progress.json.tmp", ".progress.json.kvfs-0123.tmp",
                      ".progress.json.kvfs-0123456789ABCDEF.tmp", "progress.json", ".kvfs-0123456789abcdef.tmp"] {
            #expect(!Folder.isTemporaryName(other), "\(other)")
        }
    }

    private func age(_ path: String, to date: Date) throws {
        let seconds = Int(date.timeIntervalSince1970)
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        guard utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0 else { throw POSIXError(.EIO) }
    }

    private func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
}
