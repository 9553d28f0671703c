import Foundation
import Testing
@testable import KVStore

/// The state directory's lock, as process spawning leaves it.
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
}
