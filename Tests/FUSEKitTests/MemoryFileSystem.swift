import FUSEKit
import Foundation
import Glibc

/// A flat in-memory filesystem for the tests: a root directory holding
/// regular files, with xattrs, counters of the requests it answered, and
/// ways to change files behind the kernel's back.
final class MemoryFileSystem: ConnectionConfiguring, LookupCounting, FileWriting, DirectoryReading, NameChanging,
    ExtendedAttributeHandling, StatisticsReporting, @unchecked Sendable {
    // @unchecked: all mutable state is guarded by `lock`.

    struct Node {
        var name: String?
        var data: [UInt8] = []
        var mode: mode_t = 0o644
        var modificationTime = Timestamp.now()
        var lookups: UInt64 = 0
        var xattrs: [String: [UInt8]] = [:]
    }

    /// Answer `open` with `ENOSYS` (the kernel's no-open mode), as memfs_ll does by default.
    let noOpen: Bool
    /// Entry, negative-entry and attribute timeout in seconds.
    let timeout: Double
    /// What `statfs` answers.
    let statistics = FileSystemStatistics(blockSize: 4096, blocks: 1000, freeBlocks: 600, availableBlocks: 500,
                                          files: 100, freeFiles: 40, maximumNameLength: 200)

    private let lock = NSLock()
    private var nodes: [UInt64: Node] = [:]
    private var names: [String: UInt64] = [:]
    private var nextInode: UInt64 = 2
    private var directoryTime = Timestamp.now()
    private var counts: [String: Int] = [:]
    private var renameFlags: [RenameFlags] = []
    private var initialized: ConnectionInfo?

    init(noOpen: Bool = false, timeout: Double = 3600) {
        self.noOpen = noOpen
        self.timeout = timeout
    }

    // MARK: Test hooks

    /// How many times the operation `name` was called.
    func count(_ name: String) -> Int { lock.withLock { counts[name, default: 0] } }

    /// The flags of every rename so far.
    var renames: [RenameFlags] { lock.withLock { renameFlags } }

    /// The connection as the filesystem left it in `initialize`.
    var connection: ConnectionInfo? { lock.withLock { initialized } }

    /// The inode of `name`, if it exists.
    func inode(of name: String) -> InodeNumber? { lock.withLock { names[name].map { InodeNumber($0) } } }

    /// The kernel's outstanding lookups of `name`'s inode.
    func lookups(of name: String) -> UInt64? { lock.withLock { names[name].flatMap { nodes[$0]?.lookups } } }

    /// Sets a file's contents (creating it) without telling the kernel.
    @discardableResult
    func setBehindKernel(_ name: String, _ contents: String) -> InodeNumber {
        lock.withLock {
            let ino = names[name] ?? add(name)
            nodes[ino]!.data = Array(contents.utf8)
            nodes[ino]!.modificationTime = .now()
            return InodeNumber(ino)
        }
    }

    // MARK: Helpers (lock held)

    private func bump(_ name: String) { lock.withLock { counts[name, default: 0] += 1 } }

    private func add(_ name: String) -> UInt64 {
        let ino = nextInode
        nextInode += 1
        nodes[ino] = Node(name: name)
        names[name] = ino
        directoryTime = .now()
        return ino
    }

    private func remove(_ name: String) {
        guard let ino = names.removeValue(forKey: name) else { return }
        nodes[ino]!.name = nil
        if nodes[ino]!.lookups == 0 { nodes[ino] = nil }
        directoryTime = .now()
    }

    private func attributes(_ ino: UInt64) throws(Errno) -> FileAttributes {
        if ino == InodeNumber.root.rawValue {
            return FileAttributes(inode: .root, type: .directory, permissions: 0o755, linkCount: 2,
                                  uid: getuid(), gid: getgid(), modificationTime: directoryTime, changeTime: directoryTime)
        }
        guard let node = nodes[ino] else { throw .ENOENT }
        return FileAttributes(inode: InodeNumber(ino), type: .regular, permissions: node.mode,
                              linkCount: node.name == nil ? 0 : 1, uid: getuid(), gid: getgid(),
                              size: UInt64(node.data.count), modificationTime: node.modificationTime,
                              changeTime: node.modificationTime)
    }

    private func entry(_ ino: UInt64) throws(Errno) -> EntryReply {
        nodes[ino]!.lookups += 1
        return EntryReply(try attributes(ino), attributeTimeout: timeout, entryTimeout: timeout)
    }

    private func withLock<T>(_ body: () throws(Errno) -> T) throws(Errno) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // MARK: The operations

    func initialize(_ connection: inout ConnectionInfo) {
        bump("init")
        connection.disable([.autoInvalidateData, .writebackCache])
        connection.enable(.explicitInvalidateData)
        if noOpen { connection.disable(.atomicOTrunc) }
        lock.withLock { initialized = connection }
    }

    func lookup(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) -> EntryReply {
        bump("lookup")
        return try withLock { () throws(Errno) in
            guard parent == .root, let ino = names[name] else { return .negative(timeout: timeout) }
            return try entry(ino)
        }
    }

    func forget(_ inode: InodeNumber, lookups: UInt64) {
        bump("forget")
        lock.withLock {
            guard var node = nodes[inode.rawValue] else { return }
            node.lookups -= min(lookups, node.lookups)
            nodes[inode.rawValue] = node.name == nil && node.lookups == 0 ? nil : node
        }
    }

    func getattr(_ inode: InodeNumber, handle: UInt64?, request: RequestContext) throws(Errno) -> AttributeReply {
        bump("getattr")
        return try withLock { () throws(Errno) in AttributeReply(try attributes(inode.rawValue), timeout: timeout) }
    }

    func setattr(_ inode: InodeNumber, changes: AttributeChanges, handle: UInt64?, request: RequestContext) throws(Errno) -> AttributeReply {
        bump("setattr")
        return try withLock { () throws(Errno) in
            if inode != .root {
                guard nodes[inode.rawValue] != nil else { throw .ENOENT }
                if let size = changes.size {
                    let count = Int(size)
                    if count < nodes[inode.rawValue]!.data.count {
                        nodes[inode.rawValue]!.data.removeLast(nodes[inode.rawValue]!.data.count - count)
                    } else {
                        nodes[inode.rawValue]!.data += [UInt8](repeating: 0, count: count - nodes[inode.rawValue]!.data.count)
                    }
                    nodes[inode.rawValue]!.modificationTime = .now()
                }
                if let mode = changes.mode { nodes[inode.rawValue]!.mode = mode & 0o7777 }
                if let time = changes.modificationTime { nodes[inode.rawValue]!.modificationTime = time.resolved }
            }
            return AttributeReply(try attributes(inode.rawValue), timeout: timeout)
        }
    }

    func open(_ inode: InodeNumber, flags: OpenFlags, request: RequestContext) throws(Errno) -> OpenReply {
        bump("open")
        if noOpen { throw .ENOSYS }
        if flags.contains(.truncate) {
            try withLock { () throws(Errno) in
                guard nodes[inode.rawValue] != nil else { throw .ENOENT }
                nodes[inode.rawValue]!.data = []
            }
        }
        return OpenReply(handle: 0, options: .keepCache)
    }

    func create(parent: InodeNumber, name: String, mode: mode_t, flags: OpenFlags, request: RequestContext) throws(Errno) -> CreateReply {
        bump("create")
        let entry = try withLock { () throws(Errno) -> EntryReply in
            guard parent == .root else { throw .ENOENT }
            if let ino = names[name] {
                if flags.contains(.exclusive) { throw .EEXIST }
                if flags.contains(.truncate) { nodes[ino]!.data = [] }
                return try self.entry(ino)
            }
            let ino = add(name)
            nodes[ino]!.mode = mode & 0o7777
            return try self.entry(ino)
        }
        return CreateReply(entry: entry, file: OpenReply(handle: 0, options: .keepCache))
    }

    func read(_ inode: InodeNumber, handle: UInt64, offset: Int64, size: Int, request: RequestContext,
              reply: (UnsafeRawBufferPointer) -> Void) throws(Errno) {
        bump("read")
        try withLock { () throws(Errno) in
            guard let node = nodes[inode.rawValue] else { throw .ENOENT }
            let start = min(Int(offset), node.data.count)
            let end = min(start + size, node.data.count)
            node.data.withUnsafeBytes { reply(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
        }
    }

    func write(_ inode: InodeNumber, handle: UInt64, offset: Int64, bytes: UnsafeRawBufferPointer,
               request: RequestContext) throws(Errno) -> Int {
        bump("write")
        return try withLock { () throws(Errno) in
            guard nodes[inode.rawValue] != nil else { throw .ENOENT }
            let end = Int(offset) + bytes.count
            if end > nodes[inode.rawValue]!.data.count {
                nodes[inode.rawValue]!.data += [UInt8](repeating: 0, count: end - nodes[inode.rawValue]!.data.count)
            }
            nodes[inode.rawValue]!.data.replaceSubrange(Int(offset)..<end, with: bytes)
            nodes[inode.rawValue]!.modificationTime = .now()
            return bytes.count
        }
    }

    func flush(_ inode: InodeNumber, handle: UInt64, lockOwner: UInt64, request: RequestContext) throws(Errno) {
        bump("flush")
    }

    func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags) {
        bump("release")
    }

    func fsync(_ inode: InodeNumber, handle: UInt64, dataOnly: Bool, request: RequestContext) throws(Errno) {
        throw .ENOSYS  // memory is all there is: the kernel stops asking
    }

    func opendir(_ inode: InodeNumber, flags: OpenFlags, request: RequestContext) throws(Errno) -> OpenReply {
        OpenReply()
    }

    func releasedir(_ inode: InodeNumber, handle: UInt64) {}

    func readdir(_ inode: InodeNumber, handle: UInt64, request: RequestContext) throws(Errno) -> [DirectoryEntry] {
        bump("readdir")
        guard inode == .root else { throw .ENOTDIR }
        return lock.withLock {
            [DirectoryEntry(name: ".", inode: .root, type: .directory),
             DirectoryEntry(name: "..", inode: .root, type: .directory)]
                + names.sorted { $0.value < $1.value }.map {
                    DirectoryEntry(name: $0.key, inode: InodeNumber($0.value), type: .regular)
                }
        }
    }

    func unlink(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) {
        bump("unlink")
        try withLock { () throws(Errno) in
            guard parent == .root, names[name] != nil else { throw .ENOENT }
            remove(name)
        }
    }

    // One flat folder of regular files: no other kinds of names.

    func mknod(parent: InodeNumber, name: String, mode: mode_t, device: dev_t, request: RequestContext) throws(Errno) -> EntryReply {
        throw .ENOSYS
    }

    func mkdir(parent: InodeNumber, name: String, mode: mode_t, request: RequestContext) throws(Errno) -> EntryReply {
        throw .ENOSYS
    }

    func rmdir(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) {
        throw .ENOSYS
    }

    func symlink(target: String, parent: InodeNumber, name: String, request: RequestContext) throws(Errno) -> EntryReply {
        throw .ENOSYS
    }

    func link(_ inode: InodeNumber, newParent: InodeNumber, newName: String, request: RequestContext) throws(Errno) -> EntryReply {
        throw .EPERM
    }

    func rename(parent: InodeNumber, name: String, newParent: InodeNumber, newName: String,
                flags: RenameFlags, request: RequestContext) throws(Errno) {
        bump("rename")
        try withLock { () throws(Errno) in
            renameFlags.append(flags)
            guard flags.subtracting(.noReplace).isEmpty else { throw .EINVAL }
            guard parent == .root, newParent == .root, let ino = names[name] else { throw .ENOENT }
            if names[newName] != nil {
                if flags.contains(.noReplace) { throw .EEXIST }
                remove(newName)
            }
            names[name] = nil
            names[newName] = ino
            nodes[ino]!.name = newName
            directoryTime = .now()
        }
    }

    func statfs(_ inode: InodeNumber, request: RequestContext) throws(Errno) -> FileSystemStatistics {
        bump("statfs")
        return statistics
    }

    func setxattr(_ inode: InodeNumber, name: String, value: UnsafeRawBufferPointer,
                  flags: ExtendedAttributeFlags, request: RequestContext) throws(Errno) {
        bump("setxattr")
        try withLock { () throws(Errno) in
            guard nodes[inode.rawValue] != nil else { throw .ENOTSUP }
            let exists = nodes[inode.rawValue]!.xattrs[name] != nil
            if flags.contains(.create) && exists { throw .EEXIST }
            if flags.contains(.replace) && !exists { throw .ENODATA }
            nodes[inode.rawValue]!.xattrs[name] = Array(value)
        }
    }

    func getxattr(_ inode: InodeNumber, name: String, request: RequestContext) throws(Errno) -> [UInt8] {
        bump("getxattr")
        return try withLock { () throws(Errno) in
            guard let value = nodes[inode.rawValue]?.xattrs[name] else { throw .ENODATA }
            return value
        }
    }

    func listxattr(_ inode: InodeNumber, request: RequestContext) throws(Errno) -> [String] {
        bump("listxattr")
        return lock.withLock { nodes[inode.rawValue]?.xattrs.keys.sorted() ?? [] }
    }

    func removexattr(_ inode: InodeNumber, name: String, request: RequestContext) throws(Errno) {
        bump("removexattr")
        try withLock { () throws(Errno) in
            guard nodes[inode.rawValue]?.xattrs.removeValue(forKey: name) != nil else { throw .ENODATA }
        }
    }
}
