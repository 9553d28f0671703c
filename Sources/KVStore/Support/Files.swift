import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The few file operations the store needs, straight through POSIX so that
/// durability (fsync, atomic rename) is explicit and errors carry their path.
enum Files {
    /// The file's bytes from `offset` (at most `limit` of them), or nil when it
    /// does not exist (or vanished).
    ///
    /// Only regular files are read, so a FIFO, a device or a folder under a
    /// store file's name is an error, never a hang or an endless read; with
    /// `followLinks` false (files in the sync directory, which anyone may have
    /// put there) a symbolic link is an error too.
    static func read(_ path: String, from offset: Int = 0, limit: Int = .max,
                     followLinks: Bool = true) throws(KVStoreError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followLinks ? 0 : O_NOFOLLOW))
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw error(path, "cannot open")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw error(path, "cannot stat") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .io(path: path, reason: "not a regular file") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var position = off_t(offset)
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, position) }
            if count < 0 {
                if errno == EINTR { continue }
                throw error(path, "cannot read")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            position += off_t(count)
        }
        return bytes
    }

    /// Writes a file so that readers see the old content or the new, never a
    /// mix, and it survives a crash: a temporary beside it, fsync, rename, fsync of the folder.
    static func writeAtomically(_ path: String, _ bytes: [UInt8]) throws(KVStoreError) {
        let temporary = (path as NSString).deletingLastPathComponent + "/." + (path as NSString).lastPathComponent + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 { throw error(temporary, "cannot create") }
        do throws(KVStoreError) {
            try writeAll(fd, bytes, path: temporary)
            if fsync(fd) != 0 { throw error(temporary, "cannot fsync") }
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        if rename(temporary, path) != 0 { throw error(path, "cannot rename into place") }
        syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Writes all of `bytes` at the descriptor's position, retrying short writes.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(KVStoreError) {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if count < 0 {
                if errno == EINTR { continue }
                throw error(path, "cannot write")
            }
            done += count
        }
    }

    /// Makes a folder's entries (a rename, a new file) durable.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// The names in a folder (without `.` and `..`), or [] when it does not exist.
    static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
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

    /// Whether `path` is a folder itself, not a link to one.
    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Creates a folder and its parents.
    static func makeDirectory(_ path: String) throws(KVStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw KVStoreError.io(path: path, reason: "cannot create folder (\(error.localizedDescription))")
        }
    }

    static func error(_ path: String, _ what: String) -> KVStoreError {
        .io(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}
