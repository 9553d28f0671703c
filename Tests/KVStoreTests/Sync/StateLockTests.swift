import Foundation
import Testing
@testable import KVStore

/// The state directory's locks, as process spawning and closing leave them:
/// one mount per state directory (`mount.lock`), any number of other processes.
@Suite("State directory lock")
struct StateLockTests {
    /// The store on `fixture`'s sync directory as device `a`, opened by a mount (`mount <point>`) or a program ("").
    private func open(_ fixture: SyncFixture, owner: String, readOnly: Bool = false) throws -> DeviceStore {
        try DeviceStore(syncDirectory: URL(fileURLWithPath: fixture.root.path + "/sync"),
                        stateDirectory: URL(fileURLWithPath: fixture.root.path + "/state-a"), owner: owner, readOnly: readOnly)
    }

    @Test func aMountLockThisProcessJustReleasedIsWaitedFor() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        try open(fixture, owner: "mount /m").close()
        // A child being spawned holds a copy of the lock's descriptor until its exec.
        let copy = Glibc.open(fixture.root.path + "/state-a/mount.lock", O_RDWR)
        #expect(flock(copy, LOCK_EX | LOCK_NB) == 0)
        // A thread of its own: Dispatch's pool may be busy with other suites for longer than the wait.
        Thread.detachNewThread {
            usleep(100_000)
            close(copy)
        }
        try open(fixture, owner: "mount /m").close()
    }

    @Test("a closing mount is waited for by a second mount and by readers; any other process joins the device at once")
    func aClosingMountIsWaitedForByMountsAndReaders() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        let store = try open(fixture, owner: "mount /m")
        store.announceClosing()
        #expect(try String(contentsOfFile: fixture.root.path + "/state-a/mount.lock", encoding: .utf8).hasSuffix(" (closing)\n"))
        store.close()
        // Another process holds the lock for 1.5 s and says it is closing, as an unmounted daemon does.
        for (owner, readOnly) in [("mount /m2", false), ("", true)] {
            let started = Date()
            try holdMountLock(of: fixture, saying: "pid 1 mount /elsewhere (closing)", for: 1.5) {
                try open(fixture, owner: owner, readOnly: readOnly).close()
            }
            #expect(Date().timeIntervalSince(started) >= 1.4, "\(owner), readOnly: \(readOnly)")
        }
        try holdMountLock(of: fixture, saying: "pid 1 mount /elsewhere", for: 5) {
            let started = Date()
            try open(fixture, owner: "").close()
            #expect(Date().timeIntervalSince(started) < 1)
        }
    }

    @Test("the mount's lock file says who holds it in one line, however often that changes")
    func theLockFileSaysWhoHoldsItInOneLine() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        let store = try open(fixture, owner: "mount /m")
        store.recordOwner("mount /m")
        store.announceClosing()
        let text = try String(contentsOfFile: fixture.root.path + "/state-a/mount.lock", encoding: .utf8)
        #expect(text == "pid \(getpid()) mount /m (closing)\n", "\(Array(text.utf8))")
        store.close()
    }

    @Test func aMountThatIsNotClosingIsNamedAtOnceToASecondMountAndToReaders() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        try open(fixture, owner: "mount /m").close()
        try holdMountLock(of: fixture, saying: "pid 1 mount /elsewhere", for: 5) {
            for (owner, readOnly) in [("mount /m", false), ("", true)] {
                let started = Date()
                #expect(throws: KVStoreError.stateDirectoryBusy(path: fixture.root.path + "/state-a", holder: "pid 1 mount /elsewhere")) {
                    try open(fixture, owner: owner, readOnly: readOnly)
                }
                #expect(Date().timeIntervalSince(started) < 1)
            }
        }
    }

    @Test("a mount is not refused for a program's look at its lock: a moment's shared hold, the text naming a mount that was killed")
    func aMomentsLookAtTheMountLockIsWaitedOut() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        try open(fixture, owner: "mount /m").close()
        try holdMountLock(of: fixture, saying: "pid 1 mount /killed", for: 0.03, shared: true) {
            try open(fixture, owner: "mount /m").close()
        }
    }

    /// Runs `body` while a child process (`flock`) holds state-a's mount lock
    /// (`shared`, or alone) for `seconds`, its lock file saying `holder`; waits for the child after.
    private func holdMountLock(of fixture: SyncFixture, saying holder: String, for seconds: Double, shared: Bool = false,
                               _ body: () throws -> Void) throws {
        let path = fixture.root.path + "/state-a/mount.lock"
        try Data((holder + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        child.arguments = [shared ? "--shared" : "--exclusive", path, "sleep", String(seconds)]
        try child.run()
        defer { child.waitUntilExit() }
        let probe = Glibc.open(path, O_RDONLY)
        defer { close(probe) }
        let held = poll(seconds: 10, every: 0.001) {
            guard flock(probe, LOCK_EX | LOCK_NB) == 0 else { return true }
            flock(probe, LOCK_UN)
            return false
        }
        try #require(held, "flock did not take the lock within 10 s")
        try body()
    }
}
