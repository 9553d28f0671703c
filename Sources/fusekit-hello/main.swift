// fusekit-hello: the smallest useful FUSEKit filesystem, FUSEKit's example.
// A read-only folder holding one file, `hello`, whose content is a greeting.
//
//   swift run fusekit-hello /tmp/hello &     # serves until unmounted or Ctrl-C
//   cat /tmp/hello/hello                     # Hello from FUSEKit!
//   fusermount3 -u /tmp/hello
import FUSEKit
import Glibc

/// One file in the root folder. It answers the requests `ls` and `cat`
/// make: names and attributes (every filesystem), reading files and listing
/// folders (the two groups it conforms to). Every other request gets the
/// answer libfuse gives for an operation left out (writes: ENOSYS).
final class HelloFileSystem: FileReading, DirectoryReading {
    let name = "hello"
    let content = Array("Hello from FUSEKit!\n".utf8)
    let file = InodeNumber(2)

    private func attributes(_ inode: InodeNumber) throws(Errno) -> FileAttributes {
        switch inode {
        case .root: FileAttributes(inode: .root, type: .directory, permissions: 0o555, linkCount: 2,
                                   uid: getuid(), gid: getgid())
        case file: FileAttributes(inode: file, type: .regular, permissions: 0o444, uid: getuid(), gid: getgid(),
                                  size: UInt64(content.count))
        default: throw .ENOENT
        }
    }

    func lookup(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) -> EntryReply {
        guard parent == .root, name == self.name else { throw .ENOENT }
        return EntryReply(try attributes(file))
    }

    func getattr(_ inode: InodeNumber, handle: UInt64?, request: RequestContext) throws(Errno) -> AttributeReply {
        AttributeReply(try attributes(inode))
    }

    func opendir(_ inode: InodeNumber, flags: OpenFlags, request: RequestContext) throws(Errno) -> OpenReply {
        OpenReply()  // nothing to keep per open folder
    }

    func readdir(_ inode: InodeNumber, handle: UInt64, request: RequestContext) throws(Errno) -> [DirectoryEntry] {
        guard inode == .root else { throw .ENOTDIR }
        return [DirectoryEntry(name: ".", inode: .root, type: .directory),
                DirectoryEntry(name: "..", inode: .root, type: .directory),
                DirectoryEntry(name: name, inode: file, type: .regular)]
    }

    func releasedir(_ inode: InodeNumber, handle: UInt64) {}

    func open(_ inode: InodeNumber, flags: OpenFlags, request: RequestContext) throws(Errno) -> OpenReply {
        guard inode == file else { throw .EISDIR }
        guard flags.isDisjoint(with: [.writeOnly, .readWrite]) else { throw .EACCES }
        return OpenReply()
    }

    func read(_ inode: InodeNumber, handle: UInt64, offset: Int64, size: Int, request: RequestContext,
              reply: (UnsafeRawBufferPointer) -> Void) throws(Errno) {
        let start = min(Int(offset), content.count)
        content[start..<min(start + size, content.count)].withUnsafeBytes(reply)
    }

    func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags) {}
}

/// Prints one line on standard error.
func complain(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

guard CommandLine.arguments.count == 2 else {
    complain("usage: fusekit-hello MOUNTPOINT")
    exit(64)
}
do {
    let session = try FUSESession(fileSystem: HelloFileSystem(), options: MountOptions(fsName: "hello", subtype: "hello"))
    try session.mount(at: CommandLine.arguments[1])
    session.stopOnSignals()
    try session.run()
} catch {
    complain("fusekit-hello: cannot serve \(CommandLine.arguments[1]): \(error)")
    exit(1)
}
