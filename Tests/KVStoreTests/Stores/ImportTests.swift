import Foundation
import Testing
@testable import KVStore

/// Issue 16 item 6: a store's keys go out as one XML property list and come
/// back bit for bit; an import is written all or nothing, within the quota.
@Suite("Export and import")
struct ImportTests {
    @Test("the export's XML keeps every bit of every value (date fractions and NaN payloads in an exact attribute)")
    func exactXMLKeepsEveryBit() throws {
        let seed = TestSeed.draw("exactXMLKeepsEveryBit")
        var values = RandomValues(seed: seed)
        for _ in 0..<10_000 {
            let value = values.value()
            let back = try PropertyListValue(propertyListData: value.exactXMLPropertyListData)
            #expect(back.exactBits == value.exactBits, "seed \(seed): \(value) came back as \(back)")
        }
    }

    @Test("the exact attribute is written only where the text loses bits, and a text edited by hand wins over it")
    func exactAttributeOnlyWhereNeeded() throws {
        let plain: PropertyListValue = .dictionary(["d": .date(Date(timeIntervalSinceReferenceDate: 817_035_302)), "r": .real(-0.0),
                                                    "n": .real(.nan), "i": .real(.infinity)])
        #expect(plain.exactXMLPropertyListData == plain.propertyListData(format: .xml))
        let exact: PropertyListValue = .array([.date(Date(timeIntervalSinceReferenceDate: 817_035_302.345)), .real(Double(nan: 5, signaling: false))])
        let text = String(decoding: exact.exactXMLPropertyListData, as: UTF8.self)
        #expect(text.contains("<date exact=\"817035302.345\">2026-11-22T10:15:02Z</date>"))
        #expect(text.contains("<real exact=\"nan(0x5)\">nan</real>"))
        let edited = text.replacingOccurrences(of: "10:15:02Z", with: "10:15:09Z").replacingOccurrences(of: ">nan<", with: ">2.5<")
        #expect(try PropertyListValue(propertyListData: Data(edited.utf8)).exactBits
                == PropertyListValue.array([.date(Date(timeIntervalSinceReferenceDate: 817_035_309)), .real(2.5)]).exactBits)
    }

    @Test("setValues writes every key at once, and another device reads them all")
    func batchIsWritten() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        let other = try openStore(root, device: "b")
        defer { store.close(); other.close() }
        var values = RandomValues(seed: 16)
        let batch = Dictionary(uniqueKeysWithValues: (0..<50).map { (StoreKey("k\($0)"), values.value()) })
        try store.setValues(batch)
        _ = other.refresh()
        for (key, value) in batch {
            #expect(store.value(forKey: key)?.exactBits == value.exactBits)
            #expect(other.value(forKey: key)?.exactBits == value.exactBits)
        }
    }

    @Test("an import that would pass the quota, or holds a refused key, changes nothing and says the first reason")
    func refusedBatchChangesNothing() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let store = try openStore(root, device: "a")
        defer { store.close() }
        try store.set(.string("dark"), forKey: "theme")
        try store.set(.data(Data(count: 600_000)), forKey: "big")
        let before = store.values, usage = store.usage
        let half = PropertyListValue.data(Data(count: 300_000))
        #expect(throws: KVStoreError.storeFull(key: "b", over: 151_429)) {
            try store.setValues(["a": half, "b": half, "theme": .string("light")])
        }
        #expect(throws: KVStoreError.keyTooLong(key: StoreKey(String(repeating: "x", count: 129)), utf16Units: 129)) {
            try store.setValues(["a": .integer(1), StoreKey(String(repeating: "x", count: 129)): .integer(2)])
        }
        // 2 keys and 1022 new ones make 1024: the 1023rd new one, in byte order, is one too many.
        #expect(throws: KVStoreError.tooManyKeys(key: "k999")) {
            try store.setValues(Dictionary(uniqueKeysWithValues: (0..<1023).map { ("k\($0)", PropertyListValue.integer(1)) }))
        }
        #expect(store.values == before && store.usage == usage)
        let log = try String(contentsOfFile: store.changeLogPath, encoding: .utf8)
        #expect(log.contains(#""reason":"QuotaViolationChange","code":2,"keys":["b"]"#))
        // What fits is written whole, overwrites included.
        try store.setValues(["a": half, "theme": .string("light")])
        #expect(store.value(forKey: "theme") == .string("light") && store.value(forKey: "a") == half)
    }
}
