import Foundation
import Testing
@testable import KVStore

/// Issue 7 items 1 and 2: any bytes become a value or are refused, in bounded
/// time and memory. Each of these crashed or blew up Foundation's decoder.
@Suite("Hostile property-list documents")
struct HostileDocumentTests {
    /// Issue 7.1's document: the top object is a set (marker 0xC). Foundation
    /// died on it with "Bad pointer dereference".
    static let setDocument: [UInt8] = Array("bplist00".utf8) + [0xC1, 0x01, 0x10, 0x01, 0x08, 0x0A]
        + [0, 0, 0, 0, 0, 0, 1, 1] + bigEndian(2) + bigEndian(0) + bigEndian(12)

    /// Issue 7.2's shape: six arrays of 16 references to the next, then one
    /// integer: 163 bytes that unfold to 16⁶ leaves (31 s and 630 MB in Foundation).
    static let expandingDocument: [UInt8] = {
        var objects: [[UInt8]] = (1...6).map { next in [0xAF, 0x10, 16] + [UInt8](repeating: UInt8(next), count: 16) }
        objects.append([0x10, 0x01])
        return document(objects, top: 0)
    }()

    /// A binary property list of `objects` (1-byte offsets and references).
    static func document(_ objects: [[UInt8]], top: UInt64) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = UInt64(bytes.count)
        return bytes + offsets + [0, 0, 0, 0, 0, 0, 1, 1] + bigEndian(UInt64(objects.count)) + bigEndian(top) + bigEndian(table)
    }

    static func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }

    func refusal(_ bytes: [UInt8]) -> String? {
        do {
            _ = try PropertyListValue(propertyListData: Data(bytes))
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func theSetDocumentOfIssue7IsRefusedNotACrash() throws {
        #expect(Self.setDocument.count == 46)
        #expect(refusal(Self.setDocument)?.contains("set") == true)
        #expect(throws: KVStoreError.self) { try FileForm.decode(Self.setDocument, key: "k", existingType: .string) }
    }

    @Test func sharedReferencesCannotUnfoldPastTheLimits() throws {
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(refusal(Self.expandingDocument)?.contains("more than") == true) }
        #expect(elapsed < .seconds(2), "took \(elapsed)")
        // Shared references that unfold within the limits are read, and the result shares storage.
        let fourLevels = Self.document((1...3).map { [0xAF, 0x10, 16] + [UInt8](repeating: UInt8($0), count: 16) } + [[0x10, 0x07]], top: 0)
        guard case let .array(outer) = try PropertyListValue(propertyListData: Data(fourLevels)) else { Issue.record("not an array"); return }
        #expect(outer.count == 16)
        #expect(outer[15] == .array(Array(repeating: .array(Array(repeating: .integer(7), count: 16)), count: 16)))
    }

    @Test("cycles, bad offsets, bad trailers and other types are refused", arguments: [
        (document([[0xA1, 0x00]], top: 0), "contains itself"),
        (document([[0xA1, 0x01], [0xA1, 0x00]], top: 0), "contains itself"),
        (document([[0xA1, 0x05]], top: 0), "missing object"),
        (document([[0x00]], top: 0), "null"),
        (document([[0x80, 0x01]], top: 0), "UID"),
        (document([[0xB0]], top: 0), "set"),
        (document([[0xD1, 0x01, 0x01], [0x10, 0x01]], top: 0), "not a string"),
        (document([[0x5F, 0x13] + [UInt8](repeating: 0x7F, count: 8)], top: 0), "past the object table"),
        (document([[0x14] + [0, 0, 0, 0, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]], top: 0), "64-bit"),
        (document([[0x10, 0x01]], top: 1), "top object"),
        (Array(document([[0x10, 0x01]], top: 0).dropLast()) + [0xF0], "offset table"),
        (Array("bplist00".utf8) + [0x09], "too short"),
    ])
    func malformedBinaryDocuments(bytes: [UInt8], reason: String) {
        let refused = refusal(bytes)
        #expect(refused?.contains(reason) == true, "\(refused ?? "accepted")")
    }

    @Test func nestingIsBoundedWithoutExhaustingTheStack() throws {
        func nested(_ depth: Int) -> [UInt8] {
            Array(("<plist>" + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "</plist>").utf8)
        }
        #expect(refusal(nested(256)) == nil)
        #expect(refusal(nested(257))?.contains("deeper than 256") == true)
        #expect(refusal(nested(1_000_000))?.contains("deeper than 256") == true)
        var deep = PropertyListValue.array([])
        for _ in 1..<256 { deep = .array([deep]) }
        #expect(try PropertyListValue(propertyListData: deep.propertyListData(format: .binary)) == deep)
        #expect(try PropertyListValue(propertyListData: deep.propertyListData(format: .xml)) == deep)
    }

    @Test func manyValuesAreRefusedBeforeTheyCostMemory() {
        let elements = String(repeating: "<true/>", count: DecodingLimits.standard.maxNodes)
        #expect(refusal(Array("<plist><array>\(elements)</array></plist>".utf8))?.contains("more than") == true)
        let entities = String(repeating: "&amp;", count: 100)
        #expect(refusal(Array("<plist><string>\(entities)</string></plist>".utf8)) == nil)
        #expect(refusal(Array("<!DOCTYPE plist [<!ENTITY a \"aaaa\">]><plist><string>&a;</string></plist>".utf8))?.contains("unknown entity") == true)
    }

    @Test("broken XML is refused with a reason", arguments: [
        "<plist><dict><key>a", "<plist><dict><key>a</key></dict></plist>", "<plist><integer>1.5</integer></plist>",
        "<plist><integer>18446744073709551615</integer></plist>", "<plist><real>abc</real></plist>",
        "<plist><date>2026-02-30T00:00:00Z</date></plist>", "<plist><data>AB=C</data></plist>", "<plist><foo/></plist>",
        "<plist><string>a<b/></string></plist>", "<plist><true/><true/></plist>", "<plist><string>\u{FFFD}&#xD800;</string></plist>",
        "<plist></plist>", "<plist><!-- never closed", "<plist><array><string>x</string></plist>",
    ])
    func brokenXML(text: String) {
        #expect(refusal(Array(text.utf8)) != nil)
    }

    @Test func randomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        let seeds = [HostileDocumentTests.setDocument, HostileDocumentTests.expandingDocument,
                     Array(PropertyListValue.dictionary(["a": .array([.integer(1), .string("é"), .real(-0.0)])]).propertyListData(format: .binary)),
                     Array(PropertyListValue.dictionary(["a": .array([.data(Data([1, 2])), .date(Date())])]).propertyListData(format: .xml))]
        for _ in 0..<20_000 {
            var bytes = seeds.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = refusal(bytes)
        }
    }
}
