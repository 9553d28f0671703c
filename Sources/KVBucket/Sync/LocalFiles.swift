import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The file operations a bucket round does on this machine, with the sync
/// directory's rules (docs/format.md § Atomic replacement, § Privacy and
/// links): folders 0700, files 0600, no link followed at the last step,
/// replacement through a temporary file and a rename, appends only of bytes
/// that arrived whole.
enum LocalFiles {
    /// Creates `url`'s folder and its missing parents, each 0700.
    static func makeFolder(_ url: URL) throws(BucketError) {
        var missing: [URL] = []
        var folder = url
        while !FileManager.default.fileExists(atPath: folder.path) {
            missing.append(folder)
            folder = folder.deletingLastPathComponent()
        }
        for folder in missing.reversed() where mkdir(folder.path, 0o700) != 0 && errno != EEXIST {
            throw failure("cannot create", folder)
        }
    }

    /// Replaces `url` with `bytes`: a temporary file beside it (`.NAME.kvfs-RANDOM.tmp`), synced, renamed over it.
    static func replace(_ url: URL, with bytes: [UInt8]) throws(BucketError) {
        let folder = url.deletingLastPathComponent()
        try makeFolder(folder)
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).kvfs-\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create", temporary) }
        let written = write(all: bytes, to: fd)
        let synced = fsync(fd) == 0
        close(fd)
        guard written, synced, rename(temporary.path, url.path) == 0 else {
            let error = failure("cannot write", url)
            unlink(temporary.path)
            throw error
        }
        syncFolder(folder)
    }

    /// Appends `bytes` to `url` (made, 0600, if missing) and syncs it.
    static func append(_ bytes: [UInt8], to url: URL) throws(BucketError) {
        try makeFolder(url.deletingLastPathComponent())
        let fd = open(url.path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot open", url) }
        defer { close(fd) }
        guard write(all: bytes, to: fd), fsync(fd) == 0 else { throw failure("cannot append to", url) }
    }

    /// Removes `url`, if it is there.
    static func remove(_ url: URL) throws(BucketError) {
        guard unlink(url.path) == 0 || errno == ENOENT else { throw failure("cannot remove", url) }
    }

    /// A regular file's size and modification time (nanoseconds), or nil when there is none (a link is none).
    static func status(_ url: URL) -> (size: Int, modified: Int)? {
        var info = stat()
        guard lstat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int(info.st_size), Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec))
    }

    /// The bytes `range` of `url`; fewer when the file ends first.
    static func read(_ url: URL, _ range: Range<Int>) throws(BucketError) -> [UInt8] {
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw failure("cannot open", url) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: range.count)
        var done = 0
        while done < range.count {
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, range.count - done, off_t(range.lowerBound + done)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw failure("cannot read", url) }
            if count == 0 { break }
            done += count
        }
        return Array(bytes[..<done])
    }

    /// The names in `url`'s folder (none when it is not one).
    static func names(in url: URL) -> [String] {
        var info = stat()
        guard lstat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    private static func write(all bytes: [UInt8], to fd: Int32) -> Bool {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            done += count
        }
        return true
    }

    private static func syncFolder(_ folder: URL) {
        let fd = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private static func failure(_ what: String, _ url: URL) -> BucketError {
        .local("\(what) \(url.path): \(String(cString: strerror(errno)))")
    }
}
