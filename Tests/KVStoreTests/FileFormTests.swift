import Foundation
import Testing
@testable import KVStore

@Suite("File form of values")
struct FileFormTests {
    @Test("each type's file content", arguments: [
        (PropertyListValue.string("hello"), "hello\n"),
        (.string(""), ""),
        (.integer(-42), "-42\n"),
        (.real(0.1), "0.1\n"),
        (.real(1e20), "1e+20\n"),
        (.real(.nan), "nan\n"),
        (.real(.infinity), "inf\n"),
        (.real(-.infinity), "-inf\n"),
        (.bool(true), "true\n"),
        (.bool(false), "false\n"),
        (.date(Date(timeIntervalSince1970: 1_795_342_502)), "2026-11-22T10:15:02Z\n"),
        (.date(Date(timeIntervalSince1970: 1_795_342_502.345)), "2026-11-22T10:15:02.345Z\n"),
        (.data(Data([0, 1, 255])), "\u{0}\u{1}\u{FFFD}"),
    ])
    func encode(value: PropertyListValue, text: String) {
        if case .data = value {
            #expect(FileForm.encode(value) == [0, 1, 255])
        } else {
            #expect(FileForm.encode(value) == bytes(text))
        }
    }

    @Test func collectionsAreXMLPropertyLists() throws {
        let value = PropertyListValue.dictionary(["a": .array([.integer(1), .string("x")]), "b": .bool(true)])
        let text = String(decoding: FileForm.encode(value), as: UTF8.self)
        #expect(text.hasPrefix("<?xml"))
        #expect(text.contains("<key>a</key>"))
        #expect(try FileForm.decode(FileForm.encode(value), key: "k", existingType: nil) == value)
    }

    @Test("every value reads back as itself through its file form, typed by the key", arguments: [
        PropertyListValue.string("héllo wörld"), .integer(Int64.min), .integer(Int64.max), .real(3.141592653589793),
        .real(-0.0), .real(.leastNonzeroMagnitude), .bool(true), .date(Date(timeIntervalSince1970: 1_795_342_502.5)),
        .data(Data([0xFF, 0xFE, 0x00])), .array([]), .dictionary([:]),
    ])
    func roundTrip(value: PropertyListValue) throws {
        let back = try FileForm.decode(FileForm.encode(value), key: "k", existingType: value.type)
        #expect(back == value)
    }

    @Test func newKeyTextIsStringWithOneNewlineRemoved() throws {
        #expect(try FileForm.decode(bytes("hi\n\n"), key: "k", existingType: nil) == .string("hi\n"))
        #expect(try FileForm.decode(bytes("42\n"), key: "k", existingType: nil) == .string("42"))
        #expect(try FileForm.decode([], key: "k", existingType: nil) == .string(""))
        #expect(try FileForm.decode([0xC3, 0x28], key: "k", existingType: nil) == .data(Data([0xC3, 0x28])))
    }

    @Test func typedKeysParseTrimmedText() throws {
        #expect(try FileForm.decode(bytes("  7 \n"), key: "k", existingType: .integer) == .integer(7))
        #expect(try FileForm.decode(bytes("2.5"), key: "k", existingType: .real) == .real(2.5))
        for yes in ["true", "YES", "1", "yes"] {
            #expect(try FileForm.decode(bytes(yes), key: "k", existingType: .bool) == .bool(true))
        }
        for no in ["false", "No", "0"] {
            #expect(try FileForm.decode(bytes(no), key: "k", existingType: .bool) == .bool(false))
        }
        #expect(try FileForm.decode(bytes("2026-11-22"), key: "k", existingType: .date)
                == .date(Date(timeIntervalSince1970: 1_795_305_600)))
        #expect(try FileForm.decode(bytes("2026-11-22T11:15:02+01:00"), key: "k", existingType: .date)
                == .date(Date(timeIntervalSince1970: 1_795_342_502)))
        #expect(try FileForm.decode(bytes("text"), key: "k", existingType: .data) == .data(Data("text".utf8)))
    }

    /// As an invalid value, which the filesystem reports as EINVAL (KVFileSystemTests' ErrnoTests).
    @Test("bad typed writes are refused as invalid values", arguments: [
        (PropertyListType.integer, "twelve"), (.integer, "1.5"), (.integer, "99999999999999999999"),
        (.real, "abc"), (.bool, "maybe"), (.date, "yesterday"), (.date, "2026-13-01"),
    ])
    func badTypedWrite(type: PropertyListType, text: String) {
        let error = #expect(throws: KVStoreError.self) { try FileForm.decode(bytes(text), key: "k", existingType: type) }
        guard case .invalidValue = error else {
            Issue.record("\(String(describing: error)) is not an invalid value")
            return
        }
    }

    @Test func propertyListDocumentsOverrideTheKeysType() throws {
        let xml = "  \n<?xml version=\"1.0\"?><plist version=\"1.0\"><integer>5</integer></plist>"
        #expect(try FileForm.decode(bytes(xml), key: "k", existingType: .string) == .integer(5))
        let binary = Array(PropertyListValue.array([.real(1.5)]).propertyListData(format: .binary))
        #expect(try FileForm.decode(binary, key: "k", existingType: .bool) == .array([.real(1.5)]))
        let bom = [0xEF, 0xBB, 0xBF] + bytes("<plist version=\"1.0\"><true/></plist>")
        #expect(try FileForm.decode(bom, key: "k", existingType: nil) == .bool(true))
        #expect(throws: KVStoreError.self) { try FileForm.decode(bytes("<plist><dict><key>a"), key: "k", existingType: nil) }
    }

    @Test func losslessTypeConversions() {
        #expect(PropertyListValue.string("42").converted(to: .integer) == .integer(42))
        #expect(PropertyListValue.integer(42).converted(to: .string) == .string("42"))
        #expect(PropertyListValue.integer(3).converted(to: .real) == .real(3))
        #expect(PropertyListValue.real(3.5).converted(to: .integer) == nil)
        #expect(PropertyListValue.integer(1).converted(to: .bool) == .bool(true))
        #expect(PropertyListValue.integer(2).converted(to: .bool) == nil)
        #expect(PropertyListValue.string("hi").converted(to: .data) == .data(Data("hi".utf8)))
        #expect(PropertyListValue.data(Data([0xFF])).converted(to: .string) == nil)
        #expect(PropertyListValue.string("abc").converted(to: .date) == nil)
        #expect(PropertyListValue.string("2026-11-22T10:15:02Z").converted(to: .date)
                == .date(Date(timeIntervalSince1970: 1_795_342_502)))
    }

    @Test func foundationObjectsKeepTheirTypes() {
        #expect(PropertyListValue(foundationObject: true) == .bool(true))
        #expect(PropertyListValue(foundationObject: 7) == .integer(7))
        #expect(PropertyListValue(foundationObject: 2.0) == .real(2))
        #expect(PropertyListValue(foundationObject: NSNumber(value: 2.0)) == .real(2))
        #expect(PropertyListValue(foundationObject: NSNumber(value: Int64(9))) == .integer(9))
        #expect(PropertyListValue(foundationObject: ["a": [1, "b"]] as [String: Any])
                == .dictionary(["a": .array([.integer(1), .string("b")])]))
        #expect(PropertyListValue(foundationObject: NSNumber(value: true)) == .bool(true))
        #expect(PropertyListValue(foundationObject: NSNumber(value: UInt64.max)) == nil)
        #expect(PropertyListValue(foundationObject: UInt64.max) == nil)
        #expect(PropertyListValue(foundationObject: UInt64(5)) == .integer(5))
        #expect(PropertyListValue(foundationObject: NSObject()) == nil)
        #expect(PropertyListValue(foundationObject: [NSObject()]) == nil)
    }
}
