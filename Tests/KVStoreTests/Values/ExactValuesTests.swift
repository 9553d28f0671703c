import Foundation
import Testing
@testable import KVStore

/// Issue 9.1: every device shows every value bit for bit as its writer
/// wrote it. 10⁴ random values of all eight types, nested too, written on
/// one device and compared bit for bit on another, after a restart, and
/// through the file form (which keeps everything exactly but a date's
/// fraction: past the millisecond in a key's own file, past the second in an
/// XML property list, where a NaN is also the usual one).
@Suite("Exact values across devices")
struct ExactValuesTests {
    static let rounds = 25
    static let keysPerRound = 400

    @Test func randomValuesArriveBitForBitOnAnotherDeviceAndAfterARestart() throws {
        let seed = TestSeed.draw("randomValuesArriveBitForBitOnAnotherDeviceAndAfterARestart")
        var values = RandomValues(seed: seed)
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        var writer = try fixture.open("a")
        let reader = try fixture.open("b")
        defer { reader.close() }
        var compared = 0
        for round in 0..<Self.rounds {
            var written: [StoreKey: PropertyListValue] = [:]
            for index in 0..<Self.keysPerRound {
                let key: StoreKey = "k\(index)", value = values.value()
                try writer.set(value, forKey: key)
                written[key] = value
                #expect(writer.value(forKey: key)?.exactBits == value.exactBits, "seed \(seed): the writer holds another value")
            }
            if round % 5 == 4 {
                writer.close()
                writer = try fixture.open("a")
            }
            _ = reader.refresh()
            for (key, value) in written {
                #expect(reader.value(forKey: key)?.exactBits == value.exactBits, "seed \(seed): \(key) = \(value) arrived otherwise")
                #expect(writer.value(forKey: key)?.exactBits == value.exactBits, "seed \(seed): \(key) = \(value) changed on restart")
                compared += 1
            }
        }
        writer.close()
        #expect(compared >= 10_000)
    }

    @Test func theFileFormKeepsEveryBitButDateFractionsAndNaNPayloadsInXML() throws {
        let seed = TestSeed.draw("theFileFormKeepsEveryBitButDateFractionsAndNaNPayloadsInXML")
        var values = RandomValues(seed: seed)
        for _ in 0..<10_000 {
            let value = values.value()
            let back = try FileForm.decode(FileForm.encode(value), key: "k", existingType: value.type)
            #expect(back.exactBits == value.asItsFileKeepsIt.exactBits, "seed \(seed): \(value) came back as \(back)")
            let text = try FileForm.decode(FileForm.encode(back), key: "k", existingType: back.type)
            #expect(text.exactBits == back.exactBits, "seed \(seed): \(back)'s file form is not stable")
            for format in [PropertyListSerialization.PropertyListFormat.binary, .xml] {
                let document = try PropertyListValue(propertyListData: value.propertyListData(format: format))
                #expect(document.exactBits == (format == .binary ? value : value.asXMLKeepsIt).exactBits, "seed \(seed): \(value) in \(format)")
            }
        }
    }

    @Test func aDateWrittenAsTextKeepsItsMilliseconds() throws {
        #expect(DateText.format(Date(timeIntervalSinceReferenceDate: 0.1)) == "2001-01-01T00:00:00.1Z")
        #expect(DateText.format(Date(timeIntervalSince1970: 0.9996)) == "1970-01-01T00:00:01Z")
        #expect(DateText.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.5Z")
        #expect(DateText.format(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00Z")
        #expect(DateText.parse("10000-01-01T00:00:00Z") == Date(timeIntervalSince1970: 253_402_300_800))
        #expect(DateText.format(Date(timeIntervalSince1970: -62_167_219_200 - 86400)) == "-0001-12-31T00:00:00Z")
        #expect(DateText.parse("2026-11-22T10:15:02.345Z") == Date(timeIntervalSince1970: 1_795_342_502 + 0.345))
        #expect(DateText.parse("2026-11-22 10:15Z") == Date(timeIntervalSince1970: 1_795_342_500))
        #expect(DateText.parse("2026-11-22T10:15:02+0100") == Date(timeIntervalSince1970: 1_795_338_902))
        #expect(DateText.parse("2026-02-29") == nil)
        #expect(DateText.format(Date(timeIntervalSinceReferenceDate: .nan)) == "nan")
        #expect(DateText.parse("nan")?.timeIntervalSinceReferenceDate.isNaN == true)
        #expect(DateText.parse("5") == nil)
        var values = RandomValues(seed: 9)
        for _ in 0..<10_000 {
            let date = values.date()
            let text = DateText.format(date)
            guard let back = DateText.parse(text) else { Issue.record("\(text) does not parse"); continue }
            #expect(DateText.format(back) == text)
            let interval = date.timeIntervalSince1970
            if interval.isFinite, abs(interval) < 1e11 {
                #expect(abs(back.timeIntervalSince1970 - interval) <= 0.0005 + 1e-6, "\(text)")
            }
        }
    }

    @Test func theLibraryShowsAnotherStoresDatesAndRealsBitForBit() throws {
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let first = try UbiquitousKeyValueStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("a"))
        let second = try UbiquitousKeyValueStore(syncDirectory: root.sub("sync"), stateDirectory: root.sub("b"))
        first.set(Date(timeIntervalSinceReferenceDate: 0.1), forKey: "issue")
        var values = RandomValues(seed: 91)
        let dates = (0..<500).map { _ in values.date() }
        let reals = (0..<500).map { _ in values.real() }
        for (index, date) in dates.enumerated() { first.set(date, forKey: "d\(index)") }
        for (index, real) in reals.enumerated() { first.set(real, forKey: "r\(index)") }
        #expect(first.synchronize() && second.synchronize())
        #expect((second.object(forKey: "issue") as? Date)?.timeIntervalSinceReferenceDate == 0.1)
        for (index, date) in dates.enumerated() {
            let seen = (second.object(forKey: "d\(index)") as? Date)?.timeIntervalSinceReferenceDate.bitPattern
            #expect(seen == date.timeIntervalSinceReferenceDate.bitPattern, "\(date.timeIntervalSinceReferenceDate)")
        }
        for (index, real) in reals.enumerated() {
            #expect(second.double(forKey: "r\(index)").bitPattern == real.bitPattern, "\(real)")
        }
    }
}
