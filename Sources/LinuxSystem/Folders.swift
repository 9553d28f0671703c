#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// Makes the folder `path` and the folders above it that are missing, each
/// with `mkdir(2)` and `mode`, which the umask reduces as usual. Nothing is
/// chmod'ed: a folder that exists keeps its mode, and a new one has the
/// mode a umask gives (unlike `mkdir -p -m` or Foundation's
/// `createDirectory(attributes:)`, which chmod after creating).
public func makeFolders(_ path: String, mode: mode_t) throws(SystemCallError) {
    var missing: [String] = []
    var folder = path
    while !folder.isEmpty && folder != "/" && access(folder, F_OK) != 0 {
        missing.append(folder)
        let parent = folder.lastIndex(of: "/").map { folder[..<$0] } ?? ""
        folder = parent.isEmpty && folder.hasPrefix("/") ? "/" : String(parent)
    }
    for folder in missing.reversed() where mkdir(folder, mode) != 0 && errno != EEXIST {
        throw SystemCallError("mkdir", folder, errno: Errno(rawValue: errno))
    }
}
