import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// The library's history (docs/swift.md § History): `history(forKey:)` and
    /// `restore(_:forKey:)` on either store, the in-memory one included.
    @Suite("History through the library")
    struct HistoryLibraryTests {
        @Test("history(forKey:) lists every version oldest first, with its value, its device and the current one marked",
              arguments: StoreKind.allCases)
        func history(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                try store.setValue(.integer(1), forKey: "k")
                try store.setValue(.string("two"), forKey: "k")
                try store.removeValue(forKey: "k")
                try fixture.changeExternally(["k": .bool(true)])
                let history = store.history(forKey: "k")
                #expect(history.map(\.value) == [.integer(1), .string("two"), nil, .bool(true)])
                #expect(history.map(\.isRemoval) == [false, false, true, false])
                #expect(history.map(\.isCurrent) == [false, false, false, true])
                #expect(history.map(\.size) == [2, 4, 0, 5])
                #expect(history.map(\.date) == history.map(\.date).sorted())
                #expect(history[0].deviceID != history[3].deviceID && history[0].deviceName != history[3].deviceName)
                #expect(history[2].name.hasSuffix(VersionName.removedSuffix))
                #expect(store.history(forKey: "never").isEmpty)
            }
        }

        @Test("restore(_:forKey:) writes an old version as the newest; a removal's restore removes the key",
              arguments: StoreKind.allCases)
        func restore(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                try store.setValue(.string("first"), forKey: "k")
                try store.setValue(.string("second"), forKey: "k")
                try store.removeValue(forKey: "k")
                let first = try #require(store.history(forKey: "k").first)
                try store.restore(first, forKey: "k")
                #expect(store.value(forKey: "k") == .string("first"))
                let history = store.history(forKey: "k")
                #expect(history.count == 4 && history.last?.isCurrent == true && history.last?.stamp != first.stamp)
                let removal = try #require(history.first { $0.isRemoval })
                try store.restore(removal, forKey: "k")
                #expect(store.value(forKey: "k") == nil)
                #expect(throws: KVStoreError.self) { try store.restore(removal, forKey: "k") }  // removed already
                if kind == .syncDirectory {  // the restored version syncs like any write
                    try store.restore(first, forKey: "k")
                    let other = try fixture.openDevice("reader")
                    #expect(other.value(forKey: "k") == .string("first"))
                    #expect(other.history(forKey: "k").last?.value == .string("first"))
                }
            }
        }

        @Test("the in-memory store keeps what its retention keeps: the current value always, older ones within the bytes")
        func inMemoryRetention() throws {
            // Each older version counts its record: the key, an integer, and a base (the version before it).
            let charge = RetentionRule.charge(key: "k", value: .integer(1), base: .version(Stamp(time: HLCTimestamp(rawValue: 1), device: .random())), rank: nil)
            let store = InMemoryKeyValueStore(retention: HistoryRetention(days: 30, bytes: 2 * charge))
            for value in 1...5 { try store.setValue(.integer(Int64(value)), forKey: "k") }
            #expect(store.history(forKey: "k").map(\.value) == [.integer(3), .integer(4), .integer(5)])
            let off = InMemoryKeyValueStore(retention: .off)
            try off.setValue(.integer(1), forKey: "k")
            try off.setValue(.integer(2), forKey: "k")
            try off.removeValue(forKey: "j")  // a missing key: no version
            #expect(off.history(forKey: "k").map(\.value) == [.integer(2)] && off.history(forKey: "j").isEmpty)
        }
    }
}
