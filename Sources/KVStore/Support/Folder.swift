import Foundation
import LinuxSystem
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// A folder held open by a descriptor: its entries are read, created,
/// replaced and removed relative to it (`openat`, `mkdirat`, `renameat`,
/// `unlinkat`), and never through a symbolic link. A link planted in a store
/// folder is therefore never followed, its target never opened, let alone
/// written — which matters because the daemon often runs as root.
///
/// Only the path a user names (the sync or the state directory) is followed
/// through links, as any program follows a path it is given; every folder
/// the store opens below it must be a real folder, and every file a real file.
///
/// What it creates is private: folders 0700, files 0600 (the umask can only
/// take more away). Modes that exist are never loosened: a file replaced by
/// ``writeAtomically(_:_:)`` keeps its old mode, less any group and other bits.
///
/// Its descriptor, and every file's it opens, is swift-system's
/// `FileDescriptor`, and `fstatat` is swift-system's `Stat`; `openat`,
/// `mkdirat`, `renameat`, `unlinkat` and `readdir`, which swift-system (1.8)
/// lacks, are LinuxSystem's (`DirectoryEntries.swift`).
final class Folder: Sendable {
    /// The folder's path, for messages.
    let path: String
    /// False for a store opened read-only, and for every folder opened from such a folder:
    /// each call that would change something throws instead.
    let isWritable: Bool
    private let descriptor: FileDescriptor

    private init(path: String, descriptor: FileDescriptor, isWritable: Bool) {
        self.path = path
        self.descriptor = descriptor
        self.isWritable = isWritable
    }

    deinit { try? descriptor.close() }

    // MARK: Opening folders

    /// The folder at `path`, a path a user named (links along it are followed),
    /// or nil when it does not exist. With `create` (and `writable`), a missing
    /// folder is made, with its missing parents, each 0700 and opened as the real folder it must be.
    static func open(_ path: String, create: Bool = false, writable: Bool = true) throws(KVStoreError) -> Folder? {
        do throws(SystemCallError) {
            let descriptor = try SystemCallError.naming("open") {
                try FileDescriptor.open(path.isEmpty ? "." : path, .readOnly, options: [.directory, .closeOnExec])
            }
            return Folder(path: path, descriptor: descriptor, isWritable: writable)
        } catch {
            guard error.errno == .noSuchFileOrDirectory else { throw KVStoreError(error, path: path, doing: "cannot open folder") }
        }
        guard create && writable else { return nil }
        let parentPath = (path as NSString).deletingLastPathComponent
        guard parentPath != path, let parent = try open(parentPath, create: true) else {
            throw .io(path: path, reason: "cannot create folder: its parent is missing")
        }
        return try parent.folder((path as NSString).lastPathComponent, create: true)
    }

    /// The folder `name` in this one, or nil when it does not exist (and not
    /// `create`). A link or a file under that name is refused with an error
    /// that says so: the store never follows a link out of its folders.
    func folder(_ name: String, create: Bool = false) throws(KVStoreError) -> Folder? {
        if create && isWritable, case let .failure(error) = descriptor.makeFolder(name, mode: 0o700),
           error.errno != .fileExists {
            throw KVStoreError(error, path: child(name), doing: "cannot create folder")
        }
        switch descriptor.openEntry(name, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) {
        case let .success(folder):
            return Folder(path: child(name), descriptor: folder, isWritable: isWritable)
        case let .failure(error):
            if error.errno == .noSuchFileOrDirectory && !create { return nil }
            if error.errno == .tooManySymbolicLinkLevels || error.errno == .notDirectory { throw refusal(name, expected: "folder") }
            throw KVStoreError(error, path: child(name), doing: "cannot open folder")
        }
    }

    // MARK: Files

    /// A file's bytes from `offset` (at most `limit` of them), or nil when it does not exist.
    ///
    /// Only a regular file is read, so a FIFO, a device, a folder or a link
    /// under a store file's name is an error, never a hang, an endless read
    /// or a file elsewhere.
    func read(_ name: String, from offset: Int = 0, limit: Int = .max) throws(KVStoreError) -> [UInt8]? {
        guard let file = try openFile(name, .readOnly) else { return nil }
        defer { try? file.close() }
        return try read(file, named: name, from: offset, limit: limit)
    }

    /// The bytes of `file`, this folder's file `name` opened by ``openFile(_:_:options:)``,
    /// from `offset` (at most `limit` of them).
    func read(_ file: FileDescriptor, named name: String, from offset: Int = 0, limit: Int = .max) throws(KVStoreError) -> [UInt8] {
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let count = try read(file, named: name, from: offset + bytes.count, into: UnsafeMutableRawBufferPointer(rebasing: chunk[..<wanted]))
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return bytes
    }

    /// Fills `buffer` with the bytes of `file` (this folder's file `name`)
    /// from `offset`, as far as the file goes; returns how many it read.
    func read(_ file: FileDescriptor, named name: String, from offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(KVStoreError) -> Int {
        var done = 0
        while done < buffer.count {
            let count: Int
            do throws(SystemCallError) {
                count = try SystemCallError.naming("pread") {
                    try file.read(fromAbsoluteOffset: Int64(offset + done), into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))
                }
            } catch {
                throw KVStoreError(error, path: child(name), doing: "cannot read")
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// Opens `name` (a regular file, never through a link) with `mode` and
    /// `options`, or returns nil when it does not exist and `options` does not
    /// create it. A file it creates is 0600. The caller closes the descriptor.
    func openFile(_ name: String, _ mode: FileDescriptor.AccessMode,
                  options: FileDescriptor.OpenOptions = []) throws(KVStoreError) -> FileDescriptor? {
        // In raw flags: the option sets' generic operations cost more than the call in a debug build.
        let creates = options.rawValue & O_CREAT != 0
        let writes = mode != .readOnly || creates || options.rawValue & O_TRUNC != 0
        if writes { try requireWritable() }
        // O_NONBLOCK: opening a FIFO planted under the name must not hang (it is refused below).
        let flags = mode.rawValue | options.rawValue | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        let file: FileDescriptor
        switch descriptor.openEntry(name, flags: flags, mode: 0o600) {
        case let .success(opened):
            file = opened
        case let .failure(error):
            if error.errno == .noSuchFileOrDirectory && !creates { return nil }
            if error.errno == .tooManySymbolicLinkLevels { throw refusal(name, expected: "file") }
            throw KVStoreError(error, path: child(name), doing: writes ? "cannot open for writing" : "cannot open")
        }
        guard (try? file.stat().type) == .regular else {
            try? file.close()
            throw .io(path: child(name), reason: "not a regular file; kvfs leaves it alone: remove it")
        }
        try? file.clearNonBlocking()
        return file
    }

    /// Opens `name` for appending, creating it (0600) when missing.
    func openForAppending(_ name: String) throws(KVStoreError) -> FileDescriptor {
        // Non-nil: a file opened with .create is never missing.
        try openFile(name, .writeOnly, options: [.create, .append])!
    }

    /// Replaces `name` with `bytes` so that readers see the old content or the
    /// new, never a mix, and it survives a crash: a temporary file beside it,
    /// fsync, rename, fsync of the folder.
    ///
    /// The temporary file has a name of its own for each write
    /// (``temporaryName(for:)``), created with `O_EXCL`: nothing planted in
    /// the folder (a folder, a FIFO, a link, a device node under the name an
    /// earlier version always used) can block the write or be written
    /// through, and two processes writing one file never share a temporary.
    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(KVStoreError) {
        try writeAtomically(name) { file throws(SystemCallError) in try file.write(all: bytes) }
    }

    /// ``writeAtomically(_:_:)`` with the content written by `write`, piece
    /// by piece, into the temporary file: a large file (a snapshot) need not
    /// be in memory whole.
    func writeAtomically(_ name: String, writing write: (FileDescriptor) throws(SystemCallError) -> Void) throws(KVStoreError) {
        try requireWritable()
        let mode = entry(name).map { status in status.type == .regular ? status.permissions.rawValue & 0o600 : 0o600 } ?? 0o600
        let (temporary, file) = try createTemporary(for: name, mode: mode)
        do throws(SystemCallError) {
            try write(file)
            try file.synchronize()
        } catch {
            try? file.close()
            remove(temporary)
            throw KVStoreError(error, path: child(temporary), doing: "cannot write")
        }
        try? file.close()
        if case let .failure(error) = descriptor.renameEntry(temporary, to: name) {
            remove(temporary)
            throw KVStoreError(error, path: child(name), doing: "cannot rename into place")
        }
        sync()
    }

    /// A new, empty file (`mode`) to be renamed to `name`, and its name. A
    /// name already taken (by chance, 1 in 2^64) is passed over for another.
    private func createTemporary(for name: String, mode: mode_t) throws(KVStoreError) -> (String, FileDescriptor) {
        var attempts = 0
        while true {
            let temporary = Self.temporaryName(for: name)
            switch descriptor.openEntry(temporary, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: mode) {
            case let .success(file):
                return (temporary, file)
            case let .failure(error):
                attempts += 1
                guard error.errno == .fileExists && attempts < 8 else { throw KVStoreError(error, path: child(temporary), doing: "cannot create") }
            }
        }
    }

    /// A temporary name for a new `name`: `.<name>.kvfs-<16 random hex digits>.tmp`.
    /// The leading dot hides it, and synchronizers skip `*.tmp`; the
    /// `kvfs-` mark tells ``removeStaleTemporaries(now:)`` it is the store's own.
    static func temporaryName(for name: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = String(generator.next() as UInt64, radix: 16)
        return "." + name + temporaryMark + String(repeating: "0", count: 16 - digits.count) + digits + ".tmp"
    }

    private static let temporaryMark = ".kvfs-"

    /// How old a temporary file of ours must be to be taken for one a crash
    /// left: no write takes that long, so one that another process of this
    /// device is writing now is never removed under it.
    static let staleTemporaryAge: TimeInterval = 600

    /// Removes the temporary files a crash left here (``temporaryName(for:)``,
    /// older than ``staleTemporaryAge``): a file, a link (itself, never its
    /// target) or anything else under such a name; an empty folder too. What
    /// cannot be removed (a folder that holds something) is left, and stepped
    /// around: no write uses that name again. Names of another program's
    /// (a synchronizer's `.syncthing.*.tmp`) are never touched.
    func removeStaleTemporaries(now: Date = Date()) {
        guard isWritable else { return }
        for name in names() where Self.isTemporaryName(name) {
            guard let status = entry(name) else { continue }
            let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            guard now.timeIntervalSince1970 - modified > Self.staleTemporaryAge else { continue }
            _ = descriptor.removeEntry(name, isFolder: status.type == .directory)
        }
    }

    /// Whether `name` is one ``temporaryName(for:)`` makes.
    static func isTemporaryName(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard name.hasPrefix("."), name.hasSuffix(".tmp"), utf8.count > 1 + temporaryMark.utf8.count + 16 + 4 else { return false }
        let digits = utf8.dropLast(4).suffix(16)
        return utf8.dropLast(4 + 16).suffix(temporaryMark.utf8.count).elementsEqual(temporaryMark.utf8)
            && digits.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Removes the entry `name` (a link itself, never its target).
    func remove(_ name: String) {
        guard isWritable else { return }
        _ = descriptor.removeEntry(name)
    }

    /// Removes the empty folder `name`.
    func removeFolder(_ name: String) throws(KVStoreError) {
        try requireWritable()
        if case let .failure(error) = descriptor.removeEntry(name, isFolder: true) {
            throw KVStoreError(error, path: child(name), doing: "cannot remove folder")
        }
    }

    // MARK: Looking

    /// The names in the folder, without `.` and `..`.
    func names() -> [String] {
        (try? descriptor.entryNames()) ?? []
    }

    /// What `name` is (the entry itself, a link not followed), or nil when it does not exist.
    func entry(_ name: String) -> Stat? {
        try? status(name)
    }

    /// Whether `name` is certainly not there (a failure to look is not taken for absence).
    func lacks(_ name: String) -> Bool {
        do throws(Errno) {
            _ = try status(name)
            return false
        } catch {
            return error == .noSuchFileOrDirectory
        }
    }

    /// Whether `name` is a folder itself, not a link to one.
    func hasFolder(_ name: String) -> Bool { entry(name)?.type == .directory }

    /// The folder's own inode number.
    var inode: UInt64 { (try? descriptor.stat()).map { UInt64($0.inode.rawValue) } ?? 0 }

    /// The folder's own status (its device and inode), or nil when it cannot be had (a stale NFS handle).
    var status: Stat? { try? descriptor.stat() }

    /// Whether the folder was deleted (its link count is 0), or cannot be looked at any more:
    /// nothing can be created in it then.
    var isDeleted: Bool { status.map { $0.linkCount == 0 } ?? true }

    /// Where the folder is now, as the kernel names its descriptor (nil when it cannot say):
    /// another path than the one it was opened by once it was moved.
    var currentPath: String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: descriptorPath)
    }

    /// A path that names this folder for as long as its descriptor is open,
    /// wherever it is moved: `/proc/self/fd/<descriptor>` (for inotify, which takes paths only).
    var descriptorPath: String { "/proc/self/fd/\(descriptor.rawValue)" }

    /// Makes the folder's entries (a rename, a new file) durable.
    func sync() { try? descriptor.synchronize() }

    /// `fstatat` of `name`, a link not followed. (By C string: a `FilePath` costs more to make than the call.)
    private func status(_ name: String) throws(Errno) -> Stat {
        try Stat(name, relativeTo: descriptor, flags: .symlinkNoFollow)
    }

    // MARK: Messages

    private func child(_ name: String) -> String { path + "/" + name }

    private func requireWritable() throws(KVStoreError) {
        guard isWritable else { throw .readOnly(path: path) }
    }

    /// Why `name` was not opened as a `expected` ("file" or "folder").
    private func refusal(_ name: String, expected: String) -> KVStoreError {
        let isLink = entry(name)?.type == .symbolicLink
        return .io(path: child(name), reason: isLink
            ? "is a symbolic link; kvfs never opens anything through a link in its folders: replace it by a real \(expected)"
            : "is not a \(expected); remove it")
    }
}

extension KVStoreError {
    /// A write asked of a store opened read-only.
    static func readOnly(path: String) -> KVStoreError {
        .io(path: path, reason: "the store was opened read-only, so nothing in it is written")
    }
}
