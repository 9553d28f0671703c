import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// What Apple's API cannot report, and Apple's store raises for, is refused
    /// without a crash and logged as one warning line (issue 9, item 7).
    @Suite("Refusals made visible")
    struct RefusalWarningTests {
        /// Each refused call, and what its warning line says. Run in a child
        /// process (an exit test), whose standard error the test reads.
        @Test("each refused write logs one warning line naming the key and why, and changes nothing",
              arguments: StoreKind.allCases)
        func warningLines(kind: StoreKind) async throws {
            let tooLong = String(repeating: "k", count: 129)
            let expected = [
                "set(_:forKey:) changed nothing: value for 'null' refused: NSNull is not a property-list type",
                "set(_:forKey:) changed nothing: value for 'url' refused: URL is not a property-list type",
                "set(_:forKey:) changed nothing: value for 'uuid' refused: UUID is not a property-list type",
                "set(_:forKey:) changed nothing: value for 'intKeys' refused: Dictionary<Int, Int> is not a property-list type",
                "set(_:forKey:) changed nothing: value for 'holdsNil' refused: at [1]: nil is not a property-list value",
                "set(_:forKey:) changed nothing: value for 'nested' refused: at [\"list\"][1]: NSNull is not a property-list type",
                "set(_:forKey:) changed nothing: value for 'unsigned' refused: 18446744073709551615 does not fit a property-list integer (at most 9223372036854775807)",
                "set(_:forKey:) changed nothing: key '\(tooLong.prefix(40))…' is 129 UTF-16 units long; the limit is 128",
                "set(_:forKey:) changed nothing: key '\(tooLong.prefix(40))…' is 129 UTF-16 units long; the limit is 128",
                "removeObject(forKey:) changed nothing: key '\(tooLong.prefix(40))…' is 129 UTF-16 units long; the limit is 128",
                "set(_:forKey:) changed nothing: a key must not be empty",
            ]
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [kind = kind as StoreKind] in
                try await withStore(kind) { fixture, store in
                    let recorder = NotificationRecorder(store)
                    for key in ["null", "url", "uuid", "intKeys", "holdsNil", "nested", "unsigned"] { store.set("old", forKey: key) }
                    let tooLong = String(repeating: "k", count: 129)
                    store.set(NSNull() as Any?, forKey: "null")
                    store.set(URL(fileURLWithPath: "/") as Any?, forKey: "url")
                    store.set(UUID() as Any?, forKey: "uuid")
                    store.set([1: 2] as Any?, forKey: "intKeys")
                    store.set([1, nil] as [Any?] as Any?, forKey: "holdsNil")
                    store.set(["list": [1, NSNull()]] as [String: Any]?, forKey: "nested")
                    store.set(UInt64.max as Any?, forKey: "unsigned")
                    store.set("x", forKey: tooLong)
                    store.set(1.5, forKey: tooLong)
                    store.removeObject(forKey: tooLong)
                    store.set(true, forKey: "")
                    // A quota refusal is posted instead of logged.
                    store.set(Data(count: Limits.maxValueBytes + 1) as Data?, forKey: "null")

                    #expect(store.values.mapValues { $0 } == [
                        "null": .string("old"), "url": .string("old"), "uuid": .string("old"), "intKeys": .string("old"),
                        "holdsNil": .string("old"), "nested": .string("old"), "unsigned": .string("old"),
                    ])
                    try await fixture.settle(recorder)
                    #expect(recorder.all.map(\.reason) == [NSUbiquitousKeyValueStoreQuotaViolationChange, NSUbiquitousKeyValueStoreServerChange])
                }
            }
            // swift-log's default handler: "<time> warning kvfs.library: [KVStore] <message>", one line each.
            let lines = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
                .split(separator: "\n").map(String.init).filter { $0.contains("changed nothing") }
            #expect(lines.count == expected.count)
            for (line, message) in zip(lines, expected) {
                #expect(line.contains(" warning kvfs.library") && line.hasSuffix(message), "\(line)")
            }
        }
    }
}
