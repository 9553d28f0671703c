import Foundation
import Testing
@testable import KVStore

/// The state directory's lock, as process spawning and closing leave it.
@Suite("State directory lock")
struct StateLockTests {
    @Test func aLockThisProcessJustReleasedIsWaitedFor() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        try fixture.open("a").close()
        // A child being spawned holds a copy of the lock's descriptor until its exec.
        let copy = open(fixture.root.path + "/state-a/lock", O_RDWR)
        #expect(flock(copy, LOCK_EX | LOCK_NB) == 0)
        // A thread of its own: Dispatch's pool may be busy with other suites for longer than the wait.
        Thread.detachNewThread {
            usleep(100_000)
            close(copy)
        }
        let again = try fixture.open("a")
        again.close()
    }

    @Test func aClosingStoreIsWaitedForByWritersAndReaders() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open("a")
        store.announceClosing()
        #expect(try String(contentsOfFile: fixture.root.path + "/state-a/lock", encoding: .utf8).hasSuffix(" (closing)\n"))
        store.close()
        // Another process holds the lock for 1.5 s and says it is closing, as an unmounted daemon does.
        for readOnly in [false, true] {
            let started = Date()
            try holdLock(of: fixture, saying: "pid 1 mount /elsewhere (closing)", for: 1.5) {
                let again = try DeviceStore(syncDirectory: URL(fileURLWithPath: fixture.root.path + "/sync"),
                                            stateDirectory: URL(fileURLWithPath: fixture.root.path + "/state-a"), readOnly: readOnly)
                again.close()
            }
            #expect(Date().timeIntervalSince(started) >= 1.4, "readOnly: \(readOnly)")
        }
    }

    @Test("the lock file says who holds it in one line, however often that changes")
    func theLockFileSaysWhoHoldsItInOneLine() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        let store = try fixture.open("a")
        store.announceClosing()
        let text = try String(contentsOfFile: fixture.root.path + "/state-a/lock", encoding: .utf8)
        #expect(text == "pid \(getpid())  (closing)\n", "\(Array(text.utf8))")
        store.close()
    }

    @Test func aHolderThatIsNotClosingIsNamedAtOnce() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        try fixture.open("a").close()
        try holdLock(of: fixture, saying: "pid 1 mount /elsewhere", for: 5) {
            let started = Date()
            #expect(throws: KVStoreError.stateDirectoryBusy(path: fixture.root.path + "/state-a", holder: "pid 1 mount /elsewhere")) {
                try fixture.open("a")
            }
            #expect(Date().timeIntervalSince(started) < 1)
        }
    }

    /// Runs `body` while a child process (`flock`) holds state-a's lock for
    /// `seconds`, its lock file saying `holder`; waits for the child after.
    private func holdLock(of fixture: SyncFixture, saying holder: String, for seconds: Double, _ body: () throws -> Void) throws {
        let path = fixture.root.path + "/state-a/lock"
        try Data((holder + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        child.arguments = ["--exclusive", path, "sleep", String(seconds)]
        try child.run()
        defer { child.waitUntilExit() }
        let probe = open(path, O_RDONLY)
        defer { close(probe) }
        let held = poll(seconds: 10, every: 0.002) {
            guard flock(probe, LOCK_SH | LOCK_NB) == 0 else { return true }
            flock(probe, LOCK_UN)
            return false
        }
        try #require(held, "flock did not take the lock within 10 s")
        try body()
    }
}
