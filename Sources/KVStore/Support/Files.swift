import Foundation
import SystemPackage

/// File operations by path, for the few places that have a path rather than
/// a ``Folder``: the folder part of the path is followed as a user-named path
/// is, the last part never (see ``Folder``). Errors carry their path.
enum Files {
    /// The file's bytes from `offset` (at most `limit` of them), or nil when it (or its folder) does not exist.
    static func read(_ path: String, from offset: Int = 0, limit: Int = .max) throws(KVStoreError) -> [UInt8]? {
        try Folder.open(folderPart(path))?.read(namePart(path), from: offset, limit: limit)
    }

    /// Replaces a file atomically (see ``Folder/writeAtomically(_:_:)``); its folder must exist.
    static func writeAtomically(_ path: String, _ bytes: [UInt8]) throws(KVStoreError) {
        try existingFolder(folderPart(path)).writeAtomically(namePart(path), bytes)
    }

    /// Opens a file for appending, creating it (0600) when missing; its folder must exist. The caller closes it.
    static func openForAppending(_ path: String) throws(KVStoreError) -> FileDescriptor {
        try existingFolder(folderPart(path)).openForAppending(namePart(path))
    }

    /// The names in a folder (without `.` and `..`), or [] when it does not exist.
    static func list(_ path: String) -> [String] {
        ((try? Folder.open(path)) ?? nil)?.names() ?? []
    }

    /// Creates a folder and its missing parents, each 0700.
    static func makeDirectory(_ path: String) throws(KVStoreError) {
        _ = try Folder.open(path, create: true)
    }

    private static func existingFolder(_ path: String) throws(KVStoreError) -> Folder {
        guard let folder = try Folder.open(path) else { throw .io(path: path, reason: "no such folder") }
        return folder
    }

    private static func folderPart(_ path: String) -> String { (path as NSString).deletingLastPathComponent }
    private static func namePart(_ path: String) -> String { (path as NSString).lastPathComponent }
}

/// Files the kvfs command keeps beside the store's, created the way the store
/// creates its own: private (0600) and never through a symbolic link.
public enum PrivateFile {
    /// Opens `path` for appending (the daemon's `daemon.log`), creating it
    /// 0600 when missing; its folder must exist. The caller closes the
    /// descriptor, a raw one: the daemon makes it its standard error (`dup2`).
    public static func openForAppending(_ path: String) throws(KVStoreError) -> Int32 {
        try Files.openForAppending(path).rawValue
    }
}
