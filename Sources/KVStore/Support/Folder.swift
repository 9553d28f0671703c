import Foundation
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
/// swift-system's `FileDescriptor` (the wrapper the founders prefer) has no
/// `openat`, `mkdirat`, `renameat`, `unlinkat` or `fsync` in its 1.8 release,
/// and those are the calls this type exists for, so it calls Glibc directly.
final class Folder: Sendable {
    /// The folder's path, for messages.
    let path: String
    /// False for a store opened read-only, and for every folder opened from such a folder:
    /// each call that would change something throws instead.
    let isWritable: Bool
    private let descriptor: Int32

    private init(path: String, descriptor: Int32, isWritable: Bool) {
        self.path = path
        self.descriptor = descriptor
        self.isWritable = isWritable
    }

    deinit { close(descriptor) }

    // MARK: Opening folders

    /// The folder at `path`, a path a user named (links along it are followed),
    /// or nil when it does not exist. With `create` (and `writable`), a missing
    /// folder is made, with its missing parents, each 0700 and opened as the real folder it must be.
    static func open(_ path: String, create: Bool = false, writable: Bool = true) throws(KVStoreError) -> Folder? {
        let fd = Glibc.open(path.isEmpty ? "." : path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { return Folder(path: path, descriptor: fd, isWritable: writable) }
        guard errno == ENOENT else { throw Files.error(path, "cannot open folder") }
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
        if create && isWritable && mkdirat(descriptor, name, 0o700) != 0 && errno != EEXIST {
            throw Files.error(child(name), "cannot create folder")
        }
        let fd = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT && !create { return nil }
            if errno == ELOOP || errno == ENOTDIR { throw refusal(name, expected: "folder") }
            throw Files.error(child(name), "cannot open folder")
        }
        return Folder(path: child(name), descriptor: fd, isWritable: isWritable)
    }

    // MARK: Files

    /// A file's bytes from `offset` (at most `limit` of them), or nil when it does not exist.
    ///
    /// Only a regular file is read, so a FIFO, a device, a folder or a link
    /// under a store file's name is an error, never a hang, an endless read
    /// or a file elsewhere.
    func read(_ name: String, from offset: Int = 0, limit: Int = .max) throws(KVStoreError) -> [UInt8]? {
        guard let fd = try openFile(name, O_RDONLY) else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var position = off_t(offset)
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, position) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Files.error(child(name), "cannot read")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            position += off_t(count)
        }
        return bytes
    }

    /// Opens `name` (a regular file, never through a link) with `flags`, or
    /// returns nil when it does not exist and `flags` does not create it.
    /// A file it creates is 0600. The caller closes the descriptor.
    func openFile(_ name: String, _ flags: Int32) throws(KVStoreError) -> Int32? {
        let writes = flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC) != 0
        if writes { try requireWritable() }
        // O_NONBLOCK: opening a FIFO planted under the name must not hang (it is refused below).
        let fd = openat(descriptor, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == ENOENT && flags & O_CREAT == 0 { return nil }
            if errno == ELOOP { throw refusal(name, expected: "file") }
            throw Files.error(child(name), writes ? "cannot open for writing" : "cannot open")
        }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .io(path: child(name), reason: "not a regular file; kvfs leaves it alone: remove it")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Opens `name` for appending, creating it (0600) when missing.
    func openForAppending(_ name: String) throws(KVStoreError) -> Int32 {
        // Non-nil: O_CREAT never answers "missing".
        try openFile(name, O_WRONLY | O_CREAT | O_APPEND) ?? -1
    }

    /// Replaces `name` with `bytes` so that readers see the old content or the
    /// new, never a mix, and it survives a crash: a temporary file beside it
    /// (created anew, so a link or file planted under the temporary name is
    /// removed, never written through), fsync, rename, fsync of the folder.
    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(KVStoreError) {
        try requireWritable()
        let temporary = "." + name + ".tmp"
        let mode = entry(name).map { status in status.st_mode & S_IFMT == S_IFREG ? status.st_mode & 0o600 : 0o600 } ?? 0o600
        var fd = openat(descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        if fd < 0 && errno == EEXIST {
            // A temporary left by a crash, or something planted: remove the name itself (a link goes, its target stays).
            unlinkat(descriptor, temporary, 0)
            fd = openat(descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        }
        if fd < 0 { throw Files.error(child(temporary), "cannot create") }
        do throws(KVStoreError) {
            try Files.writeAll(fd, bytes, path: child(temporary))
            if fsync(fd) != 0 { throw Files.error(child(temporary), "cannot fsync") }
            close(fd)
        } catch {
            close(fd)
            unlinkat(descriptor, temporary, 0)
            throw error
        }
        if renameat(descriptor, temporary, descriptor, name) != 0 { throw Files.error(child(name), "cannot rename into place") }
        sync()
    }

    /// Removes the entry `name` (a link itself, never its target).
    func remove(_ name: String) {
        guard isWritable else { return }
        unlinkat(descriptor, name, 0)
    }

    /// Removes the empty folder `name`.
    func removeFolder(_ name: String) throws(KVStoreError) {
        try requireWritable()
        if unlinkat(descriptor, name, AT_REMOVEDIR) != 0 { throw Files.error(child(name), "cannot remove folder") }
    }

    // MARK: Looking

    /// The names in the folder, without `.` and `..`.
    func names() -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0 else { return [] }
        guard let dir = fdopendir(copy) else {
            close(copy)
            return []
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// What `name` is (the entry itself, a link not followed), or nil when it does not exist.
    func entry(_ name: String) -> stat? {
        var status = stat()
        return fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 ? status : nil
    }

    /// Whether `name` is certainly not there (a failure to look is not taken for absence).
    func lacks(_ name: String) -> Bool {
        var status = stat()
        return fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT
    }

    /// Whether `name` is a folder itself, not a link to one.
    func hasFolder(_ name: String) -> Bool { entry(name).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false }

    /// The folder's own inode number.
    var inode: UInt64 {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    /// Makes the folder's entries (a rename, a new file) durable.
    func sync() { fsync(descriptor) }

    // MARK: Messages

    private func child(_ name: String) -> String { path + "/" + name }

    private func requireWritable() throws(KVStoreError) {
        guard isWritable else { throw .readOnly(path: path) }
    }

    /// Why `name` was not opened as a `expected` ("file" or "folder").
    private func refusal(_ name: String, expected: String) -> KVStoreError {
        let isLink = entry(name).map { $0.st_mode & S_IFMT == S_IFLNK } ?? false
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
