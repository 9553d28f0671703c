import FUSEKit
import Foundation
import Glibc
import Testing

/// Reads a whole file through the mount.
private func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

@Suite("FUSEKit on a real mount", .serialized,
       .enabled(if: TestMount.isSupported, "FUSE cannot be mounted here (needs /dev/fuse, and root or fusermount3)"))
struct MountedTests {
    @Test("create, write, read and stat through the shell and syscalls")
    func createWriteReadStat() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let a = mount.file("a")

        let shell = try sh("echo hi > \(a); cat \(a)")
        #expect(shell.status == 0, "\(shell.error)")
        #expect(shell.output == "hi\n")
        #expect(try sh("stat -c '%s %F %a %h' \(a)").output == "3 regular file 644 1\n")

        let b = mount.file("b")
        let fd = open(b, O_CREAT | O_EXCL | O_RDWR, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(pwrite(fd, "xyz", 3, 5) == 3)  // past the end: zero-filled hole
        var buffer = [UInt8](repeating: 0xFF, count: 16)
        #expect(pread(fd, &buffer, 16, 0) == 8)
        #expect(Array(buffer.prefix(8)) == [0, 0, 0, 0, 0, 0x78, 0x79, 0x7A])
        #expect(pread(fd, &buffer, 16, 8) == 0)  // end of file
        #expect(open(b, O_CREAT | O_EXCL | O_WRONLY, 0o600) == -1 && errno == EEXIST)

        var st = stat()
        #expect(stat(b, &st) == 0)
        #expect(st.st_size == 8 && st.st_mode & 0o777 == 0o600 && st.st_mode & S_IFMT == S_IFREG)
        #expect(stat(mount.file("missing"), &st) == -1 && errno == ENOENT)
        #expect(stat(mount.path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR)

        #expect(try sh("truncate -s 1 \(b) && cat \(b) | od -An -tx1").output.trimmingCharacters(in: .whitespacesAndNewlines) == "00")
    }

    @Test("readdir lists every name once across several kernel buffers, from one snapshot")
    func readdirListsEverything() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let names = (0..<300).map { "file-with-a-rather-long-name-\($0)" }
        for name in names {
            let fd = open(mount.file(name), O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            close(fd)
        }
        let before = mount.memory.count("readdir")
        let listing = try sh("ls -a -1 \(mount.path)")
        #expect(listing.status == 0, "\(listing.error)")
        let listed = listing.output.split(separator: "\n").map(String.init)
        #expect(listed.count == names.count + 2)
        #expect(Set(listed) == Set(names + [".", ".."]))
        // 300 long names need several 4 KiB READDIR requests; the filesystem was asked once.
        #expect(mount.memory.count("readdir") - before == 1)
        #expect(try Set(FileManager.default.contentsOfDirectory(atPath: mount.path)) == Set(names))
    }

    @Test("unlink removes the name; an open descriptor still reads the data")
    func unlinkKeepsOpenFiles() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let a = mount.file("a")
        #expect(try sh("echo data > \(a)").status == 0)
        let fd = open(a, O_RDONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(try sh("rm \(a)").status == 0)
        #expect(access(a, F_OK) == -1 && errno == ENOENT)
        #expect(mount.memory.inode(of: "a") == nil)
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(read(fd, &buffer, 16) == 5)
        #expect(String(decoding: buffer.prefix(5), as: UTF8.self) == "data\n")
        #expect(unlink(a) == -1 && errno == ENOENT)
    }

    @Test("rename replaces; RENAME_NOREPLACE reaches the filesystem and is honoured")
    func renameAndNoReplace() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let (a, b, c, d, e) = (mount.file("a"), mount.file("b"), mount.file("c"), mount.file("d"), mount.file("e"))
        let noReplace = RenameFlags.noReplace.rawValue

        #expect(try sh("echo one > \(a); echo two > \(b); mv \(a) \(b) && cat \(b)").output == "one\n")
        #expect(access(a, F_OK) == -1)

        #expect(renameat2(b, c, flags: noReplace) == 0)
        #expect(mount.memory.renames.last == .noReplace)
        #expect(contents(c) == "one\n")

        #expect(try sh("echo x > \(d)").status == 0)
        #expect(renameat2(c, d, flags: noReplace) == -1 && errno == EEXIST)
        #expect(contents(d) == "x\n")

        // A target that appeared behind the kernel's back: the kernel looks
        // rename targets up again (LOOKUP_RENAME_TARGET), so it is refused too.
        #expect(access(e, F_OK) == -1)
        mount.memory.setBehindKernel("e", "behind")
        #expect(renameat2(c, e, flags: noReplace) == -1 && errno == EEXIST)
        #expect(contents(c) == "one\n")
        #expect(contents(e) == "behind")

        // Flags the filesystem refuses come back as its error.
        #expect(renameat2(c, d, flags: RenameFlags.exchange.rawValue) == -1 && errno == EINVAL)
    }

    @Test("xattrs round-trip, with the size probe and ERANGE handled by the layer")
    func extendedAttributes() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let a = mount.file("a")
        #expect(try sh("echo v > \(a) && setfattr -n user.color -v blue \(a)").status == 0)
        #expect(try sh("getfattr --only-values -n user.color \(a)").output == "blue")

        #expect(getxattr(a, "user.color", size: 0).result == 4)
        let small = getxattr(a, "user.color", size: 2)
        #expect(small.result == -1 && errno == ERANGE)
        #expect(getxattr(a, "user.color", size: 64).value == Array("blue".utf8))

        #expect(setxattr(a, "user.shape", "round", flags: 0) == 0)
        #expect(setxattr(a, "user.shape", "square", flags: ExtendedAttributeFlags.create.rawValue) == -1 && errno == EEXIST)
        let names = Array("user.color\0user.shape\0".utf8)
        #expect(listxattr(a, size: 0).result == names.count)
        #expect(listxattr(a, size: 5).result == -1 && errno == ERANGE)
        #expect(listxattr(a, size: 256).value == names)

        #expect(try sh("setfattr -x user.color \(a)").status == 0)
        #expect(getxattr(a, "user.color", size: 64).result == -1 && errno == ENODATA)
        #expect(try sh("getfattr -d \(a)").output.contains("user.shape=\"round\""))
    }

    @Test("statfs numbers reach df and stat -f")
    func statfsReachesDf() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let df = try sh("df -B4096 --output=size,used,avail,itotal,iused,iavail \(mount.path) | tail -n 1")
        #expect(df.status == 0, "\(df.error)")
        #expect(df.output.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            == ["1000", "400", "500", "100", "60", "40"])
        #expect(try sh("stat -f -c '%S %b %f %a %c %d %l' \(mount.path)").output == "4096 1000 600 500 100 40 200\n")
        #expect(try sh("df --output=source,fstype \(mount.path) | tail -n 1").output
            .split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } == ["fusekit-test", "fuse.fusekittest"])
    }

    @Test("notifyInvalidateInode makes a change behind the kernel's back visible to cat")
    func invalidateInode() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let a = mount.file("a")
        #expect(try sh("printf old > \(a); cat \(a)").output == "old")
        let reads = mount.memory.count("read")
        #expect(try sh("cat \(a)").output == "old")
        #expect(mount.memory.count("read") == reads, "a re-read is served from the page cache")

        let inode = mount.memory.setBehindKernel("a", "brand new")
        #expect(try sh("cat \(a)").output == "old", "the kernel trusts its cache until told")
        #expect(mount.session.notifyInvalidateInode(inode) == nil)
        #expect(try sh("cat \(a)").output == "brand new")

        #expect(mount.session.notifyInvalidateInode(InodeNumber(999_999)) == .ENOENT)
    }

    @Test("notifyInvalidateEntry drops a cached negative lookup")
    func invalidateEntry() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let x = mount.file("x")
        #expect(access(x, F_OK) == -1 && errno == ENOENT)
        mount.memory.setBehindKernel("x", "hello")
        let lookups = mount.memory.count("lookup")
        #expect(access(x, F_OK) == -1, "the negative entry is cached")
        #expect(mount.memory.count("lookup") == lookups)
        #expect(mount.session.notifyInvalidateEntry(parent: .root, name: "x") == nil)
        #expect(contents(x) == "hello")
    }

    @Test("stop() ends the loop, unmounts, and run() returns without error")
    func cleanUnmount() throws {
        let mount = try TestMount()
        defer { mount.close() }
        #expect(TestMount.isMounted(mount.path))
        #expect(mount.session.isMounted && mount.session.mountPoint == mount.path)
        #expect(try sh("echo hi > \(mount.file("a"))").status == 0)
        mount.session.stop()
        let result = mount.waitForLoop()
        #expect(result != nil, "run() did not return")
        if case .failure(let error) = result { Issue.record("run() threw \(error)") }
        #expect(!TestMount.isMounted(mount.path))
        #expect(!mount.session.isMounted)
        #expect(mount.session.notifyInvalidateInode(.root) == .ENOTCONN)
        mount.session.stop()  // harmless a second time
    }

    @Test("an outside umount ends the loop")
    func outsideUnmount() throws {
        let mount = try TestMount()
        defer { mount.close() }
        #expect(try sh("ls \(mount.path)").status == 0)
        #expect(try sh("fusermount3 -u \(mount.path) || umount \(mount.path)").status == 0)
        #expect(mount.waitForLoop() != nil, "run() did not return")
        #expect(!TestMount.isMounted(mount.path))
    }

    @Test("stop() before run() makes run() unmount and return at once")
    func stopBeforeRun() throws {
        let path = TemporaryFolder("fusekit-test").path
        defer { rmdir(path) }
        let session = try FUSESession(fileSystem: MemoryFileSystem())
        try session.mount(at: path)
        defer { if TestMount.isMounted(path) { umount2(path, Int32(MNT_DETACH)) } }
        session.stop()
        try session.run()
        #expect(!TestMount.isMounted(path))
        #expect(throws: Errno.EINVAL) { try session.run() }
    }

    @Test("stopOnSignals turns a signal into a clean stop")
    func signalStops() throws {
        let mount = try TestMount()
        defer { mount.close() }
        #expect(try sh("echo hi > \(mount.file("a"))").status == 0)
        mount.session.stopOnSignals([SIGUSR2])
        kill(getpid(), SIGUSR2)
        #expect(mount.waitForLoop() != nil, "run() did not return")
        #expect(!TestMount.isMounted(mount.path))
    }

    @Test("no-open mode: ENOSYS from open is remembered, O_TRUNC still truncates")
    func noOpenMode() throws {
        let fs = MemoryFileSystem(noOpen: true)
        let mount = try TestMount(fs)
        defer { mount.close() }
        let a = mount.file("a")
        let shell = try sh("printf hello > \(a); cat \(a); printf x > \(a); cat \(a); cat \(a)")
        #expect(shell.output == "helloxx", "\(shell.error)")
        let connection = try #require(fs.connection)
        if connection.capable.contains(.noOpenSupport) {
            #expect(fs.count("open") == 1, "the kernel stops sending OPEN after one ENOSYS")
            #expect(fs.count("release") == 1, "only the file CREATE opened is released")
        }
        #expect(!connection.want.contains(.atomicOTrunc))
        if connection.capable.contains(.explicitInvalidateData) {
            #expect(connection.want.contains(.explicitInvalidateData) && !connection.want.contains(.autoInvalidateData))
        }
    }

    @Test("a filesystem with only getattr and lookup answers ENOSYS like libfuse")
    func defaults() throws {
        let mount = try TestMount(MinimalFileSystem())
        defer { mount.close() }
        #expect(mkdir(mount.file("d"), 0o755) == -1 && errno == ENOSYS)
        #expect(open(mount.file("f"), O_CREAT | O_WRONLY, 0o644) == -1 && errno == ENOSYS)
        #expect(try sh("stat -f -c '%S %l %b' \(mount.path)").output == "512 255 0\n")
    }

    @Test("concurrent clients on the multi-threaded loop")
    func concurrentClients() throws {
        let mount = try TestMount()
        defer { mount.close() }
        let shell = try sh("cd \(mount.path) && for i in $(seq 1 40); do (printf \"$i\" > f$i && cat f$i > /dev/null) & done; wait")
        #expect(shell.status == 0, "\(shell.error)")
        for i in 1...40 { #expect(contents(mount.file("f\(i)")) == "\(i)") }
    }

    @Test("the single-threaded loop serves requests and stops")
    func singleThreaded() throws {
        let mount = try TestMount(loop: .singleThreaded)
        defer { mount.close() }
        #expect(try sh("echo one > \(mount.file("a")); cat \(mount.file("a")); ls \(mount.path)").output == "one\na\n")
        mount.session.stop()
        #expect(mount.waitForLoop() != nil)
        #expect(!TestMount.isMounted(mount.path))
    }

    @Test("unknown mount options are refused")
    func unknownOption() {
        #expect(throws: Errno.EINVAL) {
            try FUSESession(fileSystem: MemoryFileSystem(), options: MountOptions(other: ["no_such_option_here"]))
        }
    }
}

/// Only a root directory and no group of operations: every other request gets the answer libfuse gives for an operation left out.
final class MinimalFileSystem: FileSystemOperations {
    func lookup(parent: InodeNumber, name: String, request: RequestContext) throws(Errno) -> EntryReply { throw .ENOENT }

    func getattr(_ inode: InodeNumber, handle: UInt64?, request: RequestContext) throws(Errno) -> AttributeReply {
        guard inode == .root else { throw .ENOENT }
        return AttributeReply(FileAttributes(inode: .root, type: .directory, permissions: 0o755, linkCount: 2))
    }
}
