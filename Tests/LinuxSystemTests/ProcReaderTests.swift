import Glibc
@testable import LinuxSystem
import SystemPackage
import TestSupport
import Testing

@Suite("LinuxSystem: the /proc reader")
struct ProcReaderTests {
    @Test("mountinfo's escapes are undone by one rule: a backslash and three octal digits")
    func unescape() {
        #expect(MountInfo.unescape(#"/tmp/a\040b\011c\012d\134e"#) == "/tmp/a b\tc\nd\\e")
        #expect(MountInfo.unescape(#"/tmp/\303\251"#) == "/tmp/é")  // any byte, not only the four the kernel escapes
        #expect(MountInfo.unescape(#"/tmp/a\x\04"#) == #"/tmp/a\x\04"#)  // not an escape: as it is
        #expect(MountInfo.unescape(#"\777"#) == #"\777"#)  // past 255: not a byte
    }

    @Test("a mountinfo line gives its id, device, mount point, type and source; optional fields are skipped")
    func mountLine() throws {
        let line = #"612 30 0:75 / /tmp/my\040mount rw,nosuid shared:1 master:2 - fuse.kvfs kvfs:/tmp/s\040y rw,user_id=0"#
        let mount = try #require(MountInfo(line: line))
        #expect(mount.id == 612 && mount.parentID == 30)
        #expect(mount.device == DeviceNumber(major: 0, minor: 75) && mount.device.kernelEncoding == 75)
        #expect(mount.mountPoint == "/tmp/my mount" && mount.type == "fuse.kvfs" && mount.source == "kvfs:/tmp/s y")
        #expect(mount.isFUSE)
        #expect(MountInfo(line: "not a mount line") == nil)
        #expect(DeviceNumber(major: 8, minor: 1).kernelEncoding == 8 << 20 | 1)
    }

    @Test("this process's mount table lists /proc")
    func ownMounts() throws {
        let mounts = try ProcessFolder.current.mounts()
        #expect(mounts.contains { $0.mountPoint == "/proc" && $0.type == "proc" })
    }

    @Test("fdinfo: flags, mount id and inode of an open descriptor; a missing ino: line is nil, a missing flags: line an error")
    func descriptorInfo() throws {
        let path = "/tmp/linuxsystem-test-\(getpid())"
        let file = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: .ownerReadWrite)
        defer { try? file.close(); unlink(path) }
        var status = stat()
        #expect(fstat(file.rawValue, &status) == 0)
        let info = try ProcessFolder.current.descriptorInfo(file.rawValue)
        #expect(info.isWritable && info.inode == UInt64(status.st_ino))
        #expect(try ProcessFolder.current.mounts().contains { $0.id == info.mountID })
        #expect(try ProcessFolder.current.descriptors().contains(file.rawValue))

        let noInode = Array("pos:\t0\nflags:\t0100002\nmnt_id:\t29\n".utf8)
        let parsed = noInode.withUnsafeBufferPointer { DescriptorInfo(parsing: $0) }
        #expect(parsed == DescriptorInfo(flags: 0o100002, mountID: 29, inode: nil))
        let noFlags = Array("pos:\t0\nmnt_id:\t29\nino:\t5\n".utf8)
        #expect(noFlags.withUnsafeBufferPointer { DescriptorInfo(parsing: $0) } == nil)
    }

    @Test("a process's state, name and command line; a gone process's read names the file and the call")
    func processFacts() throws {
        #expect(try !ProcessFolder.current.name().isEmpty)
        #expect(try !ProcessFolder.current.commandLine().isEmpty)
        let child = try Spawn("/bin/sleep", ["30"]).start()
        let folder = ProcessFolder(pid: child.pid)
        try poll(seconds: 1, every: 0.001) { try folder.name() == "sleep" }  // until it has run exec
        #expect(try folder.name() == "sleep" && folder.commandLine() == ["/bin/sleep", "30"] && !folder.isZombie())
        try child.send(SIGKILL)
        #expect(try poll(seconds: 1, every: 0.001) { try folder.isZombie() })
        _ = try child.wait()
        #expect(throws: SystemCallError("open", "/proc/\(child.pid)/stat", errno: .noSuchFileOrDirectory)) {
            try ProcessFolder(pid: child.pid).state()
        }
        #expect(SystemCallError("open", "/proc/1/fdinfo/3", errno: .permissionDenied).description
                == "open /proc/1/fdinfo/3: Permission denied")
    }
}

@Suite("LinuxSystem: starting processes")
struct SpawnTests {
    @Test("run gives the exit status; a signal's end is told apart; output is collected")
    func exitStatuses() throws {
        #expect(try Spawn("/bin/sh", ["-c", "exit 3"]).run() == .exited(3))
        #expect(try Spawn("/bin/sh", ["-c", "kill -KILL $$"]).run() == .signalled(SIGKILL))
        #expect(ExitStatus.signalled(SIGTERM).shellStatus == 128 + SIGTERM)
        let (status, output) = try Spawn("sh", ["-c", "echo out; echo err >&2"]).runCollectingOutput()
        #expect(status.succeeded && String(decoding: output, as: UTF8.self) == "out\nerr\n")
    }

    @Test("argv[0], the environment, and a new session with signals unblocked and SIGPIPE back at its default")
    func startOptions() throws {
        func run(_ program: String, _ arguments: [String]) throws -> String {
            var spawn = Spawn(program, arguments)
            spawn.name = "named"
            spawn.environment = ["KEY": "value", "PATH": "/usr/bin:/bin"]
            spawn.newSession = true
            let (status, output) = try spawn.runCollectingOutput()
            #expect(status.succeeded)
            return String(decoding: output, as: UTF8.self)
        }
        // The child must undo both: SIGTERM blocked on this thread, SIGPIPE ignored here.
        var blocked = sigset_t(), previousMask = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previousMask)
        let previousAction = signal(SIGPIPE, SIG_IGN)
        defer {
            signal(SIGPIPE, previousAction)
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        }
        #expect(try run("/bin/sh", ["-c", #"echo "$0 $KEY""#]) == "named value\n")
        // /proc/self/stat: PID (COMM) STATE PPID PGRP SESSION …
        let stat = try run("/bin/cat", ["/proc/self/stat"])
        let session = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")[3]
        #expect(session != String(getsid(0)))  // a session of its own
        let lines = try run("/bin/grep", ["-E", "^Sig(Blk|Ign)", "/proc/self/status"]).split(separator: "\n")
        #expect(lines.contains("SigBlk:\t0000000000000000"))
        let ignored = lines.first { $0.hasPrefix("SigIgn:\t") }.flatMap { UInt64($0.dropFirst(8), radix: 16) }
        #expect(ignored.map { $0 & (1 << UInt64(SIGPIPE - 1)) == 0 } == true)
    }

    @Test("a program that is not there is an error naming posix_spawn and the program")
    func missingProgram() {
        #expect(throws: SystemCallError("posix_spawn", "no-such-program-here", errno: .noSuchFileOrDirectory)) {
            try Spawn("no-such-program-here").run()
        }
        #expect(Spawn.find("sh") != nil && Spawn.find("/no/such") == nil)
    }

    @Test("a child can be waited for without blocking, and signalled")
    func waitAndSignal() throws {
        let child = try Spawn("/bin/sleep", ["30"]).start()
        #expect(try child.exitStatus() == nil)
        try child.send(SIGKILL)
        #expect(try child.wait() == .signalled(SIGKILL))
        #expect(throws: SystemCallError("waitpid", "/bin/sleep", errno: .noChildProcess)) { try child.wait() }
    }

    @Test("systemCall returns a success, names the call in a failure")
    func systemCalls() {
        #expect(throws: SystemCallError("close", "fd 12345", errno: .badFileDescriptor)) {
            try systemCall("close", "fd 12345") { close(12345) }
        }
        #expect((try? systemCall("getpid") { getpid() }) == getpid())
    }
}
