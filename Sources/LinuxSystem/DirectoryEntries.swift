import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The `openat` family on a folder's descriptor, which swift-system (1.8)
/// does not wrap: names are opened, made, renamed and removed relative to
/// the folder held open, whatever its path has become since. Each call
/// retries on `EINTR` and returns its failure, naming the call and the
/// entry, rather than throwing it: for these calls a failure is an everyday
/// answer (`ENOENT`), and a throw costs more than the call where throws are
/// watched (a test runner records a backtrace for each).
extension FileDescriptor {
    /// Opens the entry `name` of this folder with the raw `O_*` `flags`
    /// (`openat(2)`), creating it with `mode` when `flags` has `O_CREAT`.
    /// Add `O_NOFOLLOW` for a last name that must not be a link.
    public func openEntry(_ name: String, flags: Int32, mode: mode_t = 0) -> Result<FileDescriptor, SystemCallError> {
        systemCallResult("openat", name) { openat(rawValue, name, flags, mode) }.map(FileDescriptor.init(rawValue:))
    }

    /// Makes the folder `name` in this one with `mode`, which the umask
    /// reduces (`mkdirat(2)`).
    public func makeFolder(_ name: String, mode: mode_t) -> Result<Void, SystemCallError> {
        systemCallResult("mkdirat", name) { mkdirat(rawValue, name, mode) }.map { _ in }
    }

    /// Renames the entry `name` to `newName`, both in this folder, replacing
    /// what `newName` was atomically (`renameat(2)`).
    public func renameEntry(_ name: String, to newName: String) -> Result<Void, SystemCallError> {
        systemCallResult("renameat", newName) { renameat(rawValue, name, rawValue, newName) }.map { _ in }
    }

    /// Removes the entry `name` (a link itself, never its target), or the
    /// empty folder `name` when `isFolder` (`unlinkat(2)`).
    public func removeEntry(_ name: String, isFolder: Bool = false) -> Result<Void, SystemCallError> {
        systemCallResult("unlinkat", name) { unlinkat(rawValue, name, isFolder ? AT_REMOVEDIR : 0) }.map { _ in }
    }

    /// The names in this folder, without `.` and `..` (`readdir(3)` on a
    /// duplicate of the descriptor, which `closedir` closes, so this one
    /// stays open and where it was).
    public func entryNames() throws(SystemCallError) -> [String] {
        let copy = try SystemCallError.naming("dup") { try duplicate() }
        guard let folder = fdopendir(copy.rawValue) else {
            let error = SystemCallError("fdopendir", errno: Errno(rawValue: errno))
            try? copy.close()
            throw error
        }
        defer { closedir(folder) }
        rewinddir(folder)  // a duplicate shares the offset, which an earlier listing left at the end
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Clears `O_NONBLOCK` (a file opened non-blocking so that a FIFO under
    /// its name could not hang the open, once it is known to be a regular file).
    public func clearNonBlocking() throws(SystemCallError) {
        let flags = try systemCall("fcntl") { fcntl(rawValue, F_GETFL) }
        try systemCall("fcntl") { fcntl(rawValue, F_SETFL, flags & ~O_NONBLOCK) }
    }
}
