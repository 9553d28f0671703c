import Foundation
import LinuxSystem
import SystemPackage
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("LinuxSystem: the openat family on a folder's descriptor")
struct DirectoryEntriesTests {
    @Test("make, open, rename, list and remove entries relative to a folder held open, also after the folder was moved")
    func entries() throws {
        let root = TemporaryFolder("kvfs-dir")
        defer { root.cleanup() }
        try FileManager.default.createDirectory(atPath: root.path + "/a", withIntermediateDirectories: false)
        let folder = try FileDescriptor.open(root.path + "/a", .readOnly, options: [.directory, .closeOnExec])
        defer { try? folder.close() }
        #expect(rename(root.path + "/a", root.path + "/b") == 0)  // the descriptor follows the folder
        try folder.makeFolder("sub", mode: 0o700).get()
        let file = try folder.openEntry("f", flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode: 0o600).get()
        #expect(fcntl(file.rawValue, F_GETFL) & O_NONBLOCK != 0)
        try file.clearNonBlocking()
        #expect(fcntl(file.rawValue, F_GETFL) & O_NONBLOCK == 0)
        try file.close()
        try folder.renameEntry("f", to: "g").get()
        #expect(try folder.entryNames().sorted() == ["g", "sub"])
        #expect(try folder.entryNames().sorted() == ["g", "sub"])  // a second listing starts from the beginning again
        #expect(access(root.path + "/b/g", F_OK) == 0)
        try folder.removeEntry("g").get()
        try folder.removeEntry("sub", isFolder: true).get()
        #expect(try folder.entryNames() == [])
    }

    @Test("errors name the call and the entry: ENOENT, EEXIST, ELOOP through a link with O_NOFOLLOW, ENOTEMPTY, EISDIR, EBADF")
    func errors() throws {
        let root = TemporaryFolder("kvfs-dir")
        defer { root.cleanup() }
        let folder = try FileDescriptor.open(root.path, .readOnly, options: [.directory, .closeOnExec])
        defer { try? folder.close() }
        #expect(folder.openEntry("none", flags: O_RDONLY).failure == SystemCallError("openat", "none", errno: .noSuchFileOrDirectory))
        try folder.makeFolder("d", mode: 0o700).get()
        #expect(folder.makeFolder("d", mode: 0o700).failure == SystemCallError("mkdirat", "d", errno: .fileExists))
        #expect(symlink("d", root.path + "/link") == 0)
        #expect(folder.openEntry("link", flags: O_RDONLY | O_NOFOLLOW).failure == SystemCallError("openat", "link", errno: .tooManySymbolicLinkLevels))
        try folder.openEntry("d/x", flags: O_WRONLY | O_CREAT, mode: 0o600).get().close()
        #expect(folder.removeEntry("d", isFolder: true).failure == SystemCallError("unlinkat", "d", errno: .directoryNotEmpty))
        #expect(folder.removeEntry("d").failure == SystemCallError("unlinkat", "d", errno: .isDirectory))
        #expect(folder.renameEntry("none", to: "other").failure == SystemCallError("renameat", "other", errno: .noSuchFileOrDirectory))
        #expect(throws: SystemCallError("dup", errno: .badFileDescriptor)) { try FileDescriptor(rawValue: 987).entryNames() }
        #expect(throws: SystemCallError("fcntl", errno: .badFileDescriptor)) { try FileDescriptor(rawValue: 987).clearNonBlocking() }
    }
}

private extension Result {
    /// The failure, or nil for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
