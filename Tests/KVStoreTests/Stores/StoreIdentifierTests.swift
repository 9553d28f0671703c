import Foundation
import Testing
@testable import KVStore

/// Issue 16 item 1: a store is named by an identifier, reverse-DNS style, and
/// is the folder of that name in the sync root.
@Suite("Store identifiers and the sync root")
struct StoreIdentifierTests {
    @Test("identifiers: letters, digits, '-', '_' and '.' in non-empty parts, starting with a letter or digit, at most 155")
    func theRule() throws {
        for text in ["default", "com.example.notes", "TEAMID.com.example.notes", "a", "9", "my-app_2", "a.b-c.d_e",
                     String(repeating: "a", count: 155)] {
            #expect(try StoreIdentifier(text).rawValue == text)
        }
        let refused: [(String, String)] = [
            ("", "it is empty"),
            ("com/example", "'/' is not allowed"),
            ("my app", "' ' is not allowed"),
            ("café", "U+E9 is not allowed"),
            ("a\nb", "U+A is not allowed"),
            (String(repeating: "a", count: 156), "it has 156 characters, more than 155"),
            (".hidden", "it must start with a letter or a digit"),
            ("-x", "it must start with a letter or a digit"),
            ("..", "it must start with a letter or a digit"),
            ("com.example.", "it ends with a dot"),
            ("com..example", "it has two dots in a row"),
        ]
        for (text, reason) in refused {
            #expect(throws: InvalidStoreIdentifier(text: text, reason: reason)) { try StoreIdentifier(text) }
        }
    }

    @Test("a refusal is one line that quotes the text (control characters spelled out) and says the rule")
    func refusalIsOneLine() {
        let error = InvalidStoreIdentifier(text: "a\nb", reason: "U+A is not allowed")
        #expect(error.description == "'a\\u{a}b' is not a store identifier: U+A is not allowed (use 1 to 155 letters, digits, '-', '_' and '.', as in com.example.notes)")
        #expect(!error.description.contains("\n"))
    }

    @Test("an executable's name becomes the nearest identifier")
    func sanitizing() {
        #expect(StoreIdentifier(sanitizing: "notes")?.rawValue == "notes")
        #expect(StoreIdentifier(sanitizing: "my app+1")?.rawValue == "my-app-1")
        #expect(StoreIdentifier(sanitizing: ".hidden..tool.")?.rawValue == "hidden.tool")
        #expect(StoreIdentifier(sanitizing: "--x")?.rawValue == "x")
        #expect(StoreIdentifier(sanitizing: String(repeating: "b", count: 300))?.rawValue.count == 155)
        #expect(StoreIdentifier(sanitizing: "ÄÖ") == nil)
    }

    @Test("the root lists the folders that are stores, by identifier; default is the default store's folder")
    func rootListsStores() throws {
        let temporary = TemporaryFolder()
        defer { temporary.cleanup() }
        let root = StoreRoot(url: temporary.sub("root"))
        for name in ["com.example.b", "com.example.a", "default"] {
            try openStore(temporary, device: name, sync: "root/\(name)").close()
        }
        let manager = FileManager.default
        try manager.createDirectory(at: root.url.appendingPathComponent(".stfolder"), withIntermediateDirectories: true)
        try manager.createDirectory(at: root.url.appendingPathComponent("not a store/devices"), withIntermediateDirectories: true)
        try manager.createDirectory(at: root.url.appendingPathComponent("empty"), withIntermediateDirectories: true)
        try Data().write(to: root.url.appendingPathComponent("file"))
        try manager.createSymbolicLink(at: root.url.appendingPathComponent("link"), withDestinationURL: root.folder(of: .default))
        #expect(root.stores().map(\.rawValue) == ["com.example.a", "com.example.b", "default"])
        #expect(root.folder(of: try StoreIdentifier("com.example.a")).path == temporary.path + "/root/com.example.a")
        #expect(StoreRoot.default.folder(of: .default).path == DeviceStore.defaultSyncDirectory.standardizedFileURL.path)
        #expect(StoreRoot(url: temporary.sub("missing")).stores().isEmpty)
    }
}
