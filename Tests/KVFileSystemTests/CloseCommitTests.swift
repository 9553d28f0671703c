import Foundation
import FUSEKit
@testable import KVFileSystem
import KVStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The close-commit rules of docs/close-commit.md, each checked in-process:
/// the filesystem's operations called as libfuse would call them, with
/// request contexts made here, no kernel and no mount. Each rule has its
/// mount test too, in MountTests: CloseTests (closes, bare truncations, a
/// refused create), TruncatingWriterTests (readers' buffers), ValueTests
/// (EINVAL at close), QuotaTests (the 1025th key), ToolTests and ScratchTests
/// (scratch files, unlinked probes), DurabilityTests (fsync). Unmounted, the
/// filesystem has no `/proc` reader (``ProcessFiles``): a bare truncation
/// then waits for RELEASE, as it does where `/proc` cannot tell.
@Suite("Close-commit rules, in-process")
struct CloseCommitTests {
    /// A filesystem over a store of its own, in a temporary folder.
    final class World {
        let folder: URL
        let store: DeviceStore
        let fileSystem: KeyFileSystem
        /// A writer process and another one, as the kernel would name them.
        let writer = RequestContext(uid: geteuid(), gid: getegid(), pid: 4_000_001, umask: 0o022)
        let other = RequestContext(uid: geteuid(), gid: getegid(), pid: 4_000_002, umask: 0o022)

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("kvfs-close-commit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            store = try DeviceStore(syncDirectory: folder.appendingPathComponent("sync"), stateDirectory: folder.appendingPathComponent("state"),
                                    deviceName: "test", owner: "CloseCommitTests")
            fileSystem = KeyFileSystem(store: store, scratchPatterns: MountConfiguration.defaultScratchPatterns, invalidator: Invalidator())
        }

        deinit {
            store.close()
            try? FileManager.default.removeItem(at: folder)
        }

        /// The stored value's file form without the newline a string's ends with, or nil for no key.
        func stored(_ key: String) -> String? {
            store.entry(forKey: StoreKey(key)).map { String(decoding: $0.content, as: UTF8.self) }.map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 }
        }

        /// Creates `name` (O_CREAT | O_TRUNC, for writing) as `request`: its inode and handle.
        func create(_ name: String, as request: RequestContext? = nil) throws(Errno) -> (InodeNumber, UInt64) {
            let reply = try fileSystem.create(parent: .root, name: name, mode: 0o644, flags: [.writeOnly, .create, .truncate],
                                              request: request ?? writer)
            return (reply.entry.attributes!.inode, reply.file.handle)
        }

        /// Opens an existing `name` with `flags`.
        func open(_ name: String, _ flags: OpenFlags, as request: RequestContext? = nil) throws(Errno) -> (InodeNumber, UInt64) {
            let inode = try fileSystem.lookup(parent: .root, name: name, request: request ?? writer).attributes!.inode
            return (inode, try fileSystem.open(inode, flags: flags, request: request ?? writer).handle)
        }

        func write(_ file: (InodeNumber, UInt64), _ text: String, at offset: Int64 = 0) throws {
            let bytes = Array(text.utf8)
            _ = try bytes.withUnsafeBytes { buffer in
                try fileSystem.write(file.0, handle: file.1, offset: offset, bytes: buffer, request: writer)
            }
        }

        func read(_ file: (InodeNumber, UInt64)) throws(Errno) -> String {
            var text = ""
            try fileSystem.read(file.0, handle: file.1, offset: 0, size: 1 << 21, request: other) { text = String(decoding: $0, as: UTF8.self) }
            return text
        }

        func flush(_ file: (InodeNumber, UInt64)) throws(Errno) {
            try fileSystem.flush(file.0, handle: file.1, lockOwner: 0, request: writer)
        }

        func release(_ file: (InodeNumber, UInt64)) {
            fileSystem.release(file.0, handle: file.1, flags: .writeOnly)
        }
    }

    @Test("each close (FLUSH) of a buffer with written bytes commits it; RELEASE commits what is left and drops the buffer")
    func closeCommits() throws {
        let world = try World()
        let file = try world.create("k")
        try world.write(file, "one")
        #expect(world.stored("k") == nil)  // nobody sees a buffer before its commit
        try world.flush(file)
        #expect(world.stored("k") == "one")
        try world.write(file, "two")
        world.release(file)
        #expect(world.stored("k") == "two")
    }

    @Test("a reader's buffer is the content at its open: a commit meanwhile does not change what it reads; two writers, the last to commit wins whole")
    func privateBuffers() throws {
        let world = try World()
        let first = try world.create("k")
        try world.write(first, "old")
        try world.flush(first)
        let reader = try world.open("k", [], as: world.other)
        let second = try world.open("k", [.writeOnly, .truncate])
        try world.write(second, "newer")
        try world.write(first, "last")
        try world.flush(second)
        #expect(try world.read(reader) == "old\n")
        try world.flush(first)
        #expect(world.stored("k") == "last")
    }

    @Test("fsync commits, and makes the journal durable")
    func fsyncCommits() throws {
        let world = try World()
        let file = try world.create("k")
        try world.write(file, "synced")
        try world.fileSystem.fsync(file.0, handle: file.1, dataOnly: false, request: world.writer)
        #expect(world.stored("k") == "synced")
    }

    @Test("a bare truncation (O_TRUNC, nothing written) is not committed at a FLUSH /proc cannot judge, but at RELEASE; unlink and rename commit it first")
    func bareTruncation() throws {
        let world = try World()
        let file = try world.create("k")
        try world.write(file, "kept")
        world.release(file)
        let truncating = try world.open("k", [.writeOnly, .truncate])
        try world.flush(truncating)
        #expect(world.stored("k") == "kept")  // the FLUSH before `echo` has written
        world.release(truncating)
        #expect(world.stored("k") == "")

        let source = try world.create("tmp")
        try world.write(source, "x")
        world.release(source)
        let emptied = try world.open("tmp", [.writeOnly, .truncate])
        try world.fileSystem.rename(parent: .root, name: "tmp", newParent: .root, newName: "moved", flags: [], request: world.writer)
        #expect(world.stored("moved") == "")  // `: > tmp && mv tmp moved` moves what the close meant
        world.release(emptied)
    }

    @Test("a refused write changes nothing: a value over 1 MiB is EDQUOT at write, again at each FLUSH, and the old value stays")
    func refusedWrite() throws {
        let world = try World()
        let file = try world.create("k")
        try world.write(file, "old")
        world.release(file)
        let big = try world.open("k", [.writeOnly, .truncate])
        #expect(throws: Errno.EDQUOT) { try world.write(big, String(repeating: "x", count: (1 << 20) + 1)) }
        #expect(throws: Errno.EDQUOT) { try world.flush(big) }
        #expect(throws: Errno.EDQUOT) { try world.flush(big) }
        world.release(big)
        #expect(world.stored("k") == "old")
    }

    @Test("a commit the store refuses (text that is not the key's type) fails the close with EINVAL and keeps the old value")
    func refusedAtCommit() throws {
        let world = try World()
        try world.store.set(.integer(5), forKey: "n")
        let file = try world.open("n", [.writeOnly, .truncate])
        try world.write(file, "not a number\n")
        #expect(throws: Errno.EINVAL) { try world.flush(file) }
        world.release(file)
        #expect(world.store.entry(forKey: "n")?.value == .integer(5))
    }

    @Test("a new key is its writer's alone before its first commit: others see size 0, the writer its buffer's size; a refused first value leaves the name free")
    func newKeyBeforeCommit() throws {
        let world = try World()
        let file = try world.create("fresh")
        try world.write(file, "12345")
        #expect(try world.fileSystem.getattr(file.0, handle: nil, request: world.other).attributes.size == 0)
        #expect(try world.fileSystem.getattr(file.0, handle: nil, request: world.writer).attributes.size == 5)
        world.release(file)
        #expect(world.stored("fresh") == "12345")

        let refused = try world.create("huge")
        #expect(throws: Errno.EDQUOT) { try world.write(refused, String(repeating: "x", count: (1 << 20) + 1)) }
        world.release(refused)
        #expect(world.stored("huge") == nil)
        #expect(try world.fileSystem.lookup(parent: .root, name: "huge", request: world.other).attributes == nil)  // a negative entry
    }

    @Test("an unlink of a created, uncommitted name forgets it: it never becomes a key")
    func unlinkUncommitted() throws {
        let world = try World()
        let file = try world.create("probe")
        try world.fileSystem.unlink(parent: .root, name: "probe", request: world.writer)
        world.release(file)
        #expect(world.stored("probe") == nil)
    }

    @Test("creating a 1025th key fails at create with EDQUOT")
    func keyQuota() throws {
        let world = try World()
        try world.store.setValues(Dictionary(uniqueKeysWithValues: (0..<1024).map { (StoreKey("k\($0)"), PropertyListValue.integer($0)) }))
        #expect(throws: Errno.EDQUOT) { try world.create("one-too-many") }
    }

    @Test("a scratch file (vim's swap) lives in memory: never a key; renamed onto a key's name it becomes that key's value")
    func scratchFiles() throws {
        let world = try World()
        let swap = try world.create(".k.swp")
        try world.write(swap, "draft")
        world.release(swap)
        #expect(world.stored(".k.swp") == nil)
        try world.fileSystem.rename(parent: .root, name: ".k.swp", newParent: .root, newName: "k", flags: [], request: world.writer)
        #expect(world.stored("k") == "draft")
    }

    @Test("at unmount every open buffer is committed")
    func unmountCommitsAll() throws {
        let world = try World()
        let file = try world.create("open")
        try world.write(file, "pending")
        world.fileSystem.commitAll()
        #expect(world.stored("open") == "pending")
    }
}
