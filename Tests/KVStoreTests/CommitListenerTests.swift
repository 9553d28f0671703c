import Foundation
@testable import KVStore
import Synchronization
import Testing

/// `DeviceStore.addCommitListener`: the hook `kvfs mount --syncthing` hangs its scan requests on.
@Suite("Commit listeners")
struct CommitListenerTests {
    @Test(.timeLimit(.minutes(1)))  // a listener called under the lock would deadlock here
    func calledOncePerCommitAfterTheLockAndNeverForARefusalOrANoOp() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        defer { store.close() }
        let calls = Mutex(0)
        let token = store.addCommitListener {
            _ = store.value(forKey: "k")  // the store's lock is free: reading from here must not deadlock
            calls.withLock { $0 += 1 }
        }
        try store.set(.string("1"), forKey: "k")
        try store.rename("k", to: "j")
        try store.removeValue(forKey: "j")
        try store.removeValue(forKey: "j")  // nothing to remove: no commit
        #expect(throws: KVStoreError.self) { try store.set(.data(Data(count: Limits.maxValueBytes + 1)), forKey: "big") }
        #expect(calls.withLock { $0 } == 3)
        store.removeCommitListener(token)
        try store.set(.string("2"), forKey: "k")
        #expect(calls.withLock { $0 } == 3)
    }
}
