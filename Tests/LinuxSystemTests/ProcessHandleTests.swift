import Foundation
import LinuxSystem
import SystemPackage
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("LinuxSystem: process handles (pidfd)")
struct ProcessHandleTests {
    @Test("a handle waits for its process to end, however long, and signals it; once it ended, signals fail with ESRCH")
    func waitAndSignal() throws {
        let child = try Spawn("/bin/sleep", ["60"]).start()
        let handle = try ProcessHandle(pid: child.pid)
        #expect(handle.pid == child.pid)
        #expect(!handle.waitForExit(timeout: .milliseconds(50)))
        try handle.send(SIGKILL)
        #expect(handle.waitForExit(timeout: .seconds(10)))  // ended, not yet reaped
        #expect(try child.wait() == .signalled(SIGKILL))
        #expect(throws: SystemCallError("pidfd_send_signal", "pid \(child.pid)", errno: .noSuchProcess)) { try handle.send(SIGTERM) }
        #expect(handle.waitForExit(timeout: nil))
    }

    @Test("no such process: ESRCH")
    func noSuchProcess() throws {
        let child = try Spawn("/bin/true").start()
        _ = try child.wait()  // reaped: its pid names nobody (until the kernel gives it again, long after)
        #expect(throws: SystemCallError("pidfd_open", "pid \(child.pid)", errno: .noSuchProcess)) { try ProcessHandle(pid: child.pid) }
    }
}

@Suite("LinuxSystem: poll and event counters")
struct PollTests {
    @Test("poll waits for the first ready descriptor, reports each one's events, and times out with none")
    func pollReadiness() throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer { try? readEnd.close(); try? writeEnd.close() }
        let counter = try EventCounter()
        let clock = ContinuousClock()
        var found: [PollEvents] = []
        let waited = try clock.measure {
            found = try Poll.wait(for: [(readEnd, .readable), (counter.descriptor, .readable)], timeout: .milliseconds(30))
        }
        #expect(found == [[], []])
        #expect(waited >= .milliseconds(30))  // rounded up, never short
        counter.signal()
        #expect(try Poll.wait(for: [(readEnd, .readable), (counter.descriptor, .readable)], timeout: nil) == [[], .readable])
        try writeEnd.close()
        #expect(try readEnd.wait(for: .readable, timeout: .zero) == .hangUp)
        #expect(try writeEnd.wait(for: .writable, timeout: .zero) == .invalid)  // closed: no descriptor
    }

    @Test("an event counter wakes a waiter on another thread, and take sets it back to zero")
    func eventCounter() throws {
        let counter = try EventCounter()
        #expect(!counter.take())
        #expect(!counter.wait(timeout: .milliseconds(10)))
        Thread.detachNewThread { usleep(20_000); counter.signal() }
        #expect(counter.wait(timeout: .seconds(10)))
        #expect(counter.wait(timeout: .zero))  // waiting leaves it raised
        #expect(counter.take())
        #expect(!counter.wait(timeout: .zero))
    }

    @Test("poll names its error: more descriptors than RLIMIT_NOFILE is EINVAL")
    func pollError() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let tooMany = Array(repeating: (FileDescriptor(rawValue: -1), PollEvents.readable), count: Int(limit.rlim_cur) + 1)
        #expect(throws: SystemCallError("poll", errno: .invalidArgument)) { try Poll.wait(for: tooMany, timeout: .zero) }
    }
}
