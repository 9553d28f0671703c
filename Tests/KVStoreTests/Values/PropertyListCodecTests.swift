import Foundation
import Testing
@testable import KVStore

/// kvfs's own property-list codecs read what real tools write and write
/// what they read, exactly.
@Suite("Property-list codecs")
struct PropertyListCodecTests {
    static let sample = PropertyListValue.dictionary([
        "text": .string("héllo <&> \"wörld\" ☕\t\n"), "empty": .string(""), "int": .integer(Int64.min), "max": .integer(Int64.max),
        "small": .integer(200), "wide": .integer(70_000), "real": .real(0.1), "tiny": .real(5e-324), "big": .real(1e300),
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

    @Test func exactBitsSurviveBothFormats() throws {
        let reals: [Double] = [-0.0, .nan, -.nan, Double(nan: 0x1234, signaling: false), Double(nan: 7, signaling: true),
                               .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1 + 0.2, 1 / 3]
        for real in reals {
            for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
                guard case let .array(back) = try PropertyListValue(propertyListData: PropertyListValue.array([.real(real)]).propertyListData(format: format)),
                      case let .real(number) = back.first else { Issue.record("not a real"); continue }
                #expect(number.bitPattern == real.bitPattern, "\(real.debugDescription) in \(format)")
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
        let value = PropertyListValue.dictionary(["b": .real(-0.0), "a": .array([]), "c": .string("x\u{1}\ry"), "d": .dictionary([:])])
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
            \t<string>x&#x1;&#xD;y</string>
            \t<key>d</key>
            \t<dict/>
            </dict>
            </plist>

            """)
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
}
