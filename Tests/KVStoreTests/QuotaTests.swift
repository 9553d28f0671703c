import Testing
@testable import KVStore

@Suite("Quota")
struct QuotaTests {
    @Test func limits() throws {
        let full = QuotaUsage(keys: 1024, bytes: 1000)
        #expect(throws: KVStoreError.tooManyKeys(key: "new")) { try full.checkWrite(key: "new", oldSize: nil, newSize: 1) }
        try full.checkWrite(key: "old", oldSize: 10, newSize: 20)
        let usage = QuotaUsage(keys: 1, bytes: 1_048_000)
        #expect(throws: KVStoreError.storeFull(key: "k", over: 424)) { try usage.checkWrite(key: "k", oldSize: nil, newSize: 1000) }
        try usage.checkWrite(key: "k", oldSize: 1000, newSize: 1576)
        #expect(throws: KVStoreError.valueTooLarge(key: "k", bytes: 1_048_577)) {
            try QuotaUsage().checkWrite(key: "k", oldSize: nil, newSize: 1_048_577)
        }
        try QuotaUsage().checkWrite(key: "k", oldSize: nil, newSize: 1_048_576)
    }

    /// Their errno: KVFileSystemTests' ErrnoTests.
    @Test func errorsSayWhatToDo() {
        #expect(KVStoreError.storeFull(key: "k", over: 5).description.contains("5 bytes over"))
        #expect(KVStoreError.storeFull(key: "k", over: 5).isQuotaViolation)
        #expect(!KVStoreError.invalidValue(key: "k", reason: "x").isQuotaViolation)
    }
}
