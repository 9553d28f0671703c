import Foundation
import Testing
@testable import KVStore

/// Two keys that Swift's `String` calls equal (canonical equivalence) and
/// Apple's store keeps apart: `café` with `é` as U+00E9, and with `e` + U+0301.
enum Spellings {
    static let composed: StoreKey = "caf\u{E9}"
    static let decomposed: StoreKey = "cafe\u{301}"
}

/// Keys are their exact Unicode scalars (docs/files.md § Keys and file names): the
/// key type, the merge, the store, the journal and the quota.
@Suite("Keys are their exact scalars")
struct ExactKeyTests {
    let fixture = SyncFixture()
    let composed = Spellings.composed, decomposed = Spellings.decomposed

    @Test("a key equals another only with the same scalars, hashes as it compares, and sorts by its UTF-8 bytes")
    func keyType() throws {
        #expect(composed.string == decomposed.string, "Swift's String calls the two spellings equal")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed, StoreKey(String(String.UnicodeScalarView(composed.string.unicodeScalars)))]).count == 2)
        #expect(composed == StoreKey("caf" + "\u{E9}"))
        #expect(composed.hashValue == StoreKey("caf" + "\u{E9}").hashValue)
        #expect(decomposed < composed, "e (0x65) comes before é (0xC3 0xA9)")
        var random = SystemRandomNumberGenerator()
        let alphabet: [String] = ["a", "Z", "é", "e\u{301}", "\u{E9}", "😀", "\u{FFFD}", "ß", "\u{0}", "~", "ﬁ"]
        let keys = (0..<500).map { _ in StoreKey((0..<Int.random(in: 1...4, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()) }
        #expect(keys.sorted().map(\.string.utf8).elementsEqual(keys.map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map(\.utf8)) {
            $0.elementsEqual($1)
        })
        let decoded = try JSONDecoder().decode([StoreKey].self, from: JSONEncoder().encode([composed, decomposed]))
        #expect(decoded.map(\.string.unicodeScalars.count) == [4, 5], "JSON keeps each key's scalars")
    }

    @Test("the merge holds both spellings, from one folder or two")
    func mergeHoldsBoth() {
        let (a, b) = (DeviceID.random(), DeviceID.random())
        func record(_ device: DeviceID, _ time: UInt64, _ key: StoreKey, _ value: Int64) -> JournalRecord {
            JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: time, counter: 0), device: device), operation: .put(key: key, value: .integer(value)))
        }
        var merged = MergedState()
        #expect(merged.apply([record(a, 1, composed, 1)], in: a) == [composed])
        #expect(merged.apply([record(b, 2, decomposed, 2)], in: b) == [decomposed])
        #expect(merged.visible.count == 2 && merged.usage.keys == 2)
        #expect(merged.visible[composed]?.value == .integer(1) && merged.visible[decomposed]?.value == .integer(2))
        // Compacting `a`'s folder keeps its own key, not the other spelling's.
        #expect(merged.records(inFolder: a).map(\.changes[0].key) == [composed])
    }

    @Test("one device sets, reads, renames and removes each spelling apart; both survive reopening and compaction; the quota counts two keys")
    func oneDevice() throws {
        var store = try fixture.open("a")
        defer { store.close(); fixture.cleanup() }
        try store.set(.string("one"), forKey: composed)
        try store.set(.string("two"), forKey: decomposed)
        #expect(store.value(forKey: composed) == .string("one") && store.value(forKey: decomposed) == .string("two"))
        #expect(store.usage == QuotaUsage(keys: 2, bytes: 8))
        #expect(Set(store.values.keys) == [composed, decomposed])
        store.close()
        store = try fixture.open("a")
        #expect(store.value(forKey: composed) == .string("one") && store.value(forKey: decomposed) == .string("two"), "from the journal")
        store.compact()
        store.close()
        store = try fixture.open("a")
        #expect(store.value(forKey: composed) == .string("one") && store.value(forKey: decomposed) == .string("two"), "from the snapshot")
        try store.removeValue(forKey: composed)
        #expect(store.value(forKey: composed) == nil && store.value(forKey: decomposed) == .string("two"))
        try store.rename(decomposed, to: composed)
        #expect(store.value(forKey: composed) == .string("two") && store.value(forKey: decomposed) == nil, "a rename between the spellings moves the value")
    }

    @Test("the 1024-key quota counts the two spellings as two keys")
    func quotaCountsTwoKeys() throws {
        let store = try fixture.open("a")
        defer { store.close(); fixture.cleanup() }
        try store.setValues(Dictionary(uniqueKeysWithValues: (0..<Limits.maxKeys - 2).map { (StoreKey("k\($0)"), PropertyListValue.integer(0)) }))
        try store.set(.integer(1), forKey: composed)
        try store.set(.integer(2), forKey: decomposed)
        #expect(store.usage.keys == Limits.maxKeys)
        #expect(throws: KVStoreError.tooManyKeys(key: "one more")) { try store.set(.integer(3), forKey: "one more") }
    }

    @Test("two devices each write one spelling: both show both; a removal of one leaves the other; changes name the exact key")
    func twoDevices() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        defer { a.close(); b.close(); fixture.cleanup() }
        try a.set(.string("composed"), forKey: composed)
        try b.set(.string("decomposed"), forKey: decomposed)
        let change = a.refresh()
        #expect(change?.keys == [decomposed], "b's write is news to a, named as b spelled it")
        b.refresh()
        for store in [a, b] {
            #expect(store.values == [composed: .string("composed"), decomposed: .string("decomposed")])
        }
        try b.removeValue(forKey: composed)
        #expect(a.refresh()?.keys == [composed])
        #expect(a.values == [decomposed: .string("decomposed")])
    }

    @Test("InitialSyncChange names the spelling that changed while the device was away, from what it saw (seen.log)")
    func initialSyncNamesTheExactKey() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: composed)
        try a.set(.integer(1), forKey: decomposed)
        var b = try fixture.open("b")
        b.close()
        try a.set(.integer(2), forKey: decomposed)
        b = try fixture.open("b")
        defer { b.close() }
        let lines = String(decoding: b.changeLogContents(), as: UTF8.self).split(separator: "\n")
        let last = try #require(lines.last.flatMap { JSONDocument.decoded(ChangeLog.Line.self, from: $0.utf8) })
        #expect(last.reason == "InitialSyncChange" && last.keys == [decomposed], "\(last.keys.map(\.debugDescription))")
    }

    @Test("Swift's [String: Any] keeps, of two spellings, the one first in UTF-8 order, with its own value and spelling")
    func stringKeyedKeepsTheFirstInUTF8Order() throws {
        let dictionary: [StoreKey: PropertyListValue] = [composed: .integer(1), decomposed: .integer(2), "other": .integer(3)]
        for _ in 0..<20 {  // whatever order the dictionary gives its entries
            let swift = Dictionary(uniqueKeysWithValues: dictionary.shuffled().map { ($0.key, $0.value) }).stringKeyed(\.foundationObject)
            #expect(swift.count == 2)
            let kept = try #require(swift.first { $0.key != "other" })
            #expect(Array(kept.key.unicodeScalars) == Array(decomposed.string.unicodeScalars) && kept.value as? Int64 == 2)
        }
    }
}
