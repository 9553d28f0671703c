import Foundation
import Testing
@testable import KVStore

/// kvfs's own property-list codecs read what real tools write and write
/// what they read, exactly.
@Suite("Property-list codecs")
struct PropertyListCodecTests {
    static let sample = PropertyListValue.dictionary([
        "text": .string("héllo <&> \"wörld\" ☕\t\n"), "empty": .string(""), "int": .integer(Int64.min), "max": .integer(Int64.max),
        "small": .integer(200), "wide": .integer(70_000), "real": .real(0.1), "tiny": .real(.leastNonzeroMagnitude), "big": .real(1e300),
        "yes": .bool(true), "no": .bool(false), "when": .date(Date(timeIntervalSinceReferenceDate: 817_035_302)),
        "bytes": .data(Data((0...255).map { UInt8($0) })), "none": .data(Data()),
        "list": .array([.integer(1), .array([]), .dictionary([:]), .string(String(repeating: "long ", count: 20))]),
    ])

    @Test("Foundation's own documents, both formats, read as the same value", arguments: [
        PropertyListSerialization.PropertyListFormat.xml, .binary,
    ])
    func foundationOutputIsRead(format: PropertyListSerialization.PropertyListFormat) throws {
        let document = try PropertyListSerialization.data(fromPropertyList: Self.sample.foundationObject, format: format, options: 0)
        let value = try PropertyListValue(propertyListData: document)
        if format == .binary {
            #expect(value == Self.sample)
        } else {
            // Foundation's XML drops -0.0's sign and rounds reals to 17 digits; these survive both.
            #expect(value == Self.sample)
        }
    }

    @Test("our documents read back exactly, and Foundation reads them", arguments: [
        PropertyListSerialization.PropertyListFormat.xml, .binary,
    ])
    func ownOutputRoundTrips(format: PropertyListSerialization.PropertyListFormat) throws {
        let document = Self.sample.propertyListData(format: format)
        #expect(try PropertyListValue(propertyListData: document) == Self.sample)
        let object = try PropertyListSerialization.propertyList(from: document, options: [], format: nil)
        #expect(PropertyListValue(foundationObject: object) == Self.sample)
    }

    @Test func realsKeepTheirBitsInBothFormatsButANaNsPayloadInXML() throws {
        let reals: [Double] = [-0.0, .nan, -.nan, Double(nan: 0x1234, signaling: false), Double(nan: 7, signaling: true),
                               .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1 + 0.2, 1 / 3]
        for real in reals {
            for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
                guard case let .array(back) = try PropertyListValue(propertyListData: PropertyListValue.array([.real(real)]).propertyListData(format: format)),
                      case let .real(number) = back.first else { Issue.record("not a real"); continue }
                let kept = format == .xml && real.isNaN ? Double.nan : real
                #expect(number.bitPattern == kept.bitPattern, "\(real.debugDescription) in \(format)")
            }
        }
        let date = Date(timeIntervalSinceReferenceDate: 0.1)
        let binary = try PropertyListValue(propertyListData: PropertyListValue.date(date).propertyListData(format: .binary))
        #expect(binary == .date(date))
    }

    @Test func plutilStyleXMLWithEverythingPeopleWrite() throws {
        let text = """
            \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
            <!-- made by hand -->
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd" [
              <!ELEMENT note (#PCDATA)> <!-- an internal subset with a ] inside a comment is rare; brackets in quotes: "]" -->
            ]>
            <plist version="1.0">
            <dict>
                <key>cdata</key><string><![CDATA[<not a tag> & ]]>tail</string>
                <key>entities</key><string>&lt;&gt;&amp;&quot;&apos;&#65;&#x263A;</string>
                <key>comment</key><string>a<!-- inside -->b</string>
                <key>data</key><data>
                    AAEC
                    /w==
                </data>
                <key>hex</key><integer> 0x1F </integer>
                <key>negative</key><integer>- 5</integer>
                <key>zero</key><integer>000</integer>
                <key>real</key><real>1.5e3</real>
                <key>inf</key><real>+infinity</real>
                <key>date</key><date>2026-11-22T10:15:02Z</date>
                <key>empty</key><string/>
                <key>truth</key><true></true>
                <key attr='x'>arr</key><array/>
            </dict>
            </plist>
            <?trailing instruction?>
            """
        let value = try PropertyListValue(propertyListData: Data(text.utf8))
        #expect(value == .dictionary([
            "cdata": .string("<not a tag> & tail"), "entities": .string("<>&\"'A☺"), "comment": .string("ab"),
            "data": .data(Data([0, 1, 2, 255])), "hex": .integer(31), "negative": .integer(-5), "zero": .integer(0),
            "real": .real(1500), "inf": .real(.infinity), "date": .date(Date(timeIntervalSince1970: 1_795_342_502)),
            "empty": .string(""), "truth": .bool(true), "arr": .array([]),
        ]))
        #expect(try PropertyListValue(propertyListData: Data("<dict><key>a</key><integer>1</integer></dict>".utf8))
                == .dictionary(["a": .integer(1)]))
    }

    @Test func theXMLFormIsDeterministicAndApplesLayout() {
        let value = PropertyListValue.dictionary([
            "b": .real(-0.0), "a": .array([]), "c": .string("x\u{1}\ry\u{FFFF}"), "d": .dictionary([:]),
            "e": .array([.real(Double(nan: 5, signaling: true)), .real(-.infinity), .real(.leastNonzeroMagnitude), .date(Date(timeIntervalSince1970: 1_767_261_600.5))]),
        ])
        let text = String(decoding: value.propertyListData(format: .xml), as: UTF8.self)
        #expect(text == """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>a</key>
            \t<array/>
            \t<key>b</key>
            \t<real>-0.0</real>
            \t<key>c</key>
            \t<string>x&#x1;&#xD;y&#xFFFF;</string>
            \t<key>d</key>
            \t<dict/>
            \t<key>e</key>
            \t<array>
            \t\t<real>nan</real>
            \t\t<real>-infinity</real>
            \t\t<real>5e-324</real>
            \t\t<date>2026-01-01T10:00:00Z</date>
            \t</array>
            </dict>
            </plist>

            """)
    }

    /// CoreFoundation's XML writer floors (`CFAbsoluteTimeGetGregorianDate`), and its
    /// parser, Python's and libplist's read `YYYY-MM-DDTHH:MM:SSZ` only.
    @Test("a date in XML is the second it falls in, before 1970 and 2001 too", arguments: [
        (Date(timeIntervalSinceReferenceDate: 0.5), "2001-01-01T00:00:00Z"),
        (Date(timeIntervalSinceReferenceDate: -0.0), "2001-01-01T00:00:00Z"),
        (Date(timeIntervalSinceReferenceDate: -1e-300), "2000-12-31T23:59:59Z"),
        (Date(timeIntervalSinceReferenceDate: 0.999_999_999), "2001-01-01T00:00:00Z"),
        (Date(timeIntervalSince1970: -0.5), "1969-12-31T23:59:59Z"),
        (Date(timeIntervalSince1970: -1), "1969-12-31T23:59:59Z"),
        (Date(timeIntervalSince1970: 1_767_261_600.999), "2026-01-01T10:00:00Z"),
        (Date(timeIntervalSince1970: -62_135_596_800 + 0.75), "0001-01-01T00:00:00Z"),
        (Date(timeIntervalSince1970: -62_135_596_800 - 0.25), "0000-12-31T23:59:59Z"),
        (Date(timeIntervalSince1970: 253_402_300_800.5), "10000-01-01T00:00:00Z"),
    ])
    func xmlDatesAreWholeSecondsRoundedDown(date: Date, text: String) throws {
        let document = String(decoding: PropertyListValue.array([.date(date)]).propertyListData(format: .xml), as: UTF8.self)
        #expect(document.contains("<date>\(text)</date>"), "\(date.timeIntervalSinceReferenceDate): \(document)")
        let second = Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down) + 0)
        #expect(try PropertyListValue(propertyListData: Data(document.utf8)) == .array([.date(second)]))
    }

    @Test func theReaderStillTakesFractionsAndEveryRealSpelling() throws {
        let document = """
            <plist><array><date>2026-01-01T10:00:00.5Z</date><real>nan(0x5)</real><real>-nan</real><real>inf</real><real>-inf</real></array></plist>
            """
        guard case let .array(values) = try PropertyListValue(propertyListData: Data(document.utf8)), values.count == 5,
              case let .real(payload) = values[1], case let .real(negative) = values[2] else { Issue.record("not read"); return }
        #expect(values[0] == .date(Date(timeIntervalSince1970: 1_767_261_600.5)))
        #expect(payload.bitPattern == Double(nan: 5, signaling: false).bitPattern && negative.sign == .minus && negative.isNaN)
        #expect(Array(values[3...]) == [.real(.infinity), .real(-.infinity)])
    }

    @Test func anIntegerPastInt64IsRefusedWithItsReason() throws {
        // Apple's binary form of UInt64.max: a 16-byte integer.
        let document = HostileDocumentTests.document([[0x14] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8)], top: 0)
        #expect(throws: PropertyListDecodingError(reason: "an integer past the signed 64-bit range, which kvfs does not store")) {
            try PropertyListValue(propertyListData: Data(document))
        }
        let fits = HostileDocumentTests.document([[0x14] + [UInt8](repeating: 0, count: 15) + [9]], top: 0)
        #expect(try PropertyListValue(propertyListData: Data(fits)) == .integer(9))
    }

    @Test("dictionary keys that differ only in normalization (é, and e with a combining accent) are two keys, read and written back bit for bit")
    func canonicallyEquivalentKeysAreTwoKeys() throws {
        let (composed, decomposed): (StoreKey, StoreKey) = ("\u{E9}", "e\u{301}")
        let xml = Array(#"<plist version="1.0"><dict><key>\#u{E9}</key><integer>1</integer><key>e\#u{301}</key><integer>2</integer></dict></plist>"#.utf8)
        // The same in binary: a dictionary of two keys (UTF-16 strings) and two integers.
        let binary = HostileDocumentTests.document([[0xD2, 1, 2, 3, 4], [0x61, 0x00, 0xE9], [0x62, 0x00, 0x65, 0x03, 0x01], [0x10, 1], [0x10, 2]], top: 0)
        for document in [xml, binary] {
            for value in [try PropertyListValue(propertyListData: Data(document)),
                          try FileForm.decode(document, key: "k", existingType: .string)] {
                guard case let .dictionary(entries) = value else {
                    Issue.record("not a dictionary: \(value)")
                    continue
                }
                #expect(entries.count == 2 && entries[composed] == .integer(1) && entries[decomposed] == .integer(2), "\(entries)")
                // Written back with both keys, in UTF-8 order (e is 0x65, é begins 0xC3), and read back the same.
                let written = FileForm.encode(value)
                #expect(String(decoding: written, as: UTF8.self).contains(
                    "<key>e\u{301}</key>\n\t<integer>2</integer>\n\t<key>\u{E9}</key>\n\t<integer>1</integer>"))
                for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
                    let again = try PropertyListValue(propertyListData: value.propertyListData(format: format))
                    #expect(again.propertyListData(format: .binary) == value.propertyListData(format: .binary))
                    guard case let .dictionary(read) = again else { continue }
                    #expect(Set(read.keys) == [composed, decomposed])
                }
                let record = JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: 1, counter: 0), device: DeviceID.random()),
                                           operation: .put(key: "k", value: value))
                #expect(RecordCodec.encode(record).withUnsafeBytes { RecordCodec.decode($0) } == record, "the journal keeps both keys")
            }
        }
        // The very same key twice is a plain duplicate: the last value wins, as in CoreFoundation.
        let twice = Array(#"<plist version="1.0"><dict><key>a</key><integer>1</integer><key>a</key><integer>2</integer></dict></plist>"#.utf8)
        #expect(try PropertyListValue(propertyListData: Data(twice)) == .dictionary(["a": .integer(2)]))
    }
}
