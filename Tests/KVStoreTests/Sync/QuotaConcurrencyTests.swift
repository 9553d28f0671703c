import Foundation
import Testing
@testable import KVStore

/// Writes on several devices that together pass a limit: every device ends
/// with the same store by the oldest-first rule (``QuotaRule``), and says so.
@Suite("Quota under concurrency")
struct QuotaConcurrencyTests {
    let fixture = SyncFixture()
    let big = PropertyListValue.data(Data(repeating: 1, count: 600_000))

    private func log(_ store: DeviceStore) -> String { String(decoding: store.changeLogContents(), as: UTF8.self) }

    @Test func theNewerOfTwoWritesThatDoNotFitTogetherIsSetAsideEverywhere() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(big, forKey: "first")   // neither has seen the other's write
        try b.set(big, forKey: "second")
        a.refresh()
        b.refresh()
        for store in [a, b] {
            #expect(Set(store.values.keys) == ["first"])
            #expect(store.status().setAside == ["second"])
            #expect(log(store).contains("\"reason\":\"QuotaViolationChange\",\"code\":2,\"keys\":[\"second\"]"))
        }
        let c = try fixture.open("c")  // a device that was away learns of it when it starts
        defer { c.close() }
        #expect(Set(c.values.keys) == ["first"])
        #expect(log(c).contains("\"reason\":\"QuotaViolationChange\",\"code\":2,\"keys\":[\"second\"]"))
        try a.removeValue(forKey: "first")  // room again: the set-aside value comes back
        b.refresh()
        #expect(Set(a.values.keys) == ["second"] && Set(b.values.keys) == ["second"])
    }

    @Test func aWriteThatWouldBeSetAsideIsRefused() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(big, forKey: "first")
        try b.set(big, forKey: "second")
        try b.set(.data(Data(repeating: 2, count: 300_000)), forKey: "third")
        a.refresh()
        #expect(Set(a.values.keys) == ["first", "third"])  // "second" (600 kB) is set aside
        // Rewriting "first" moves it behind "second" and "third" in stamp order: at 400 kB it would
        // not fit after them, although it fits in what is visible now. Refused, and nothing changes.
        #expect(throws: KVStoreError.storeFull(key: "first", over: 600_000 + 300_000 + 400_000 - 1_048_576)) {
            try a.set(.data(Data(repeating: 3, count: 400_000)), forKey: "first")
        }
        #expect(Set(a.values.keys) == ["first", "third"] && a.value(forKey: "first") == big)
        try a.set(.data(Data(repeating: 3, count: 100_000)), forKey: "first")  // fits after them: "second" comes back
        b.refresh()
        #expect(Set(a.values.keys) == ["first", "second", "third"] && a.values == b.values)
    }
}
