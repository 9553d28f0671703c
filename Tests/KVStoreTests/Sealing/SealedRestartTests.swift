import Foundation
import Testing
@testable import KVStore

/// Issue 26 item 2's last sentence across a restart: "A device never rolls back what it has already
/// merged, even when a writer without keys rolls a folder back". How far a device read each sealed
/// folder is kept in its state directory (`ReadMark`), so a folder rolled back while it was stopped
/// is refused when it starts again (docs/sealed.md § Refusals).
@Suite("Sealed stores: a folder rolled back while a device is stopped")
struct SealedRestartTests {
    let fixture = SyncFixture()

    init() { TestSealing.seal(fixture.root.path + "/sync") }

    @Test("a folder put back as it was before (a segment cut short, or an older generation) while a device is stopped is refused when it starts: nothing of the older copy is merged, and the folder as its device wrote it is read again")
    func rolledBackWhileStopped() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a")
        defer { a.close() }
        var b = try fixture.open("b")
        for index in 0..<3 { try a.set(.string("old \(index)"), forKey: "k\(index)") }
        a.reachSyncPoint()
        let folder = fixture.folder(of: a), old = fixture.root.path + "/old", real = fixture.root.path + "/real"
        try copyFolder(folder, to: old)
        try a.set(.string("new 0"), forKey: "k0")
        try a.set(.string("after"), forKey: "k9")
        b.refresh(after: a)
        let expected: [StoreKey: PropertyListValue] = ["k0": .string("new 0"), "k1": .string("old 1"), "k2": .string("old 2"), "k9": .string("after")]
        #expect(b.values == expected)
        b.close()
        #expect(try String(contentsOfFile: fixture.root.path + "/state-b/read-marks", encoding: .utf8).contains(a.deviceID.hex))

        // The same segment, cut back to what it held before k0 changed and k9 was written.
        try copyFolder(folder, to: real)
        try copyFolder(old, to: folder)
        b = try fixture.open("b")
        #expect(b.value(forKey: "k0") != .string("old 0") && b.value(forKey: "k9") == nil, "the older copy is not merged")
        #expect(b.status().warnings.contains { $0.kind == .refused && $0.message.contains("went back") && $0.message.contains("before") })
        #expect(fixture.warnings.contain("went back"))
        try copyFolder(real, to: folder)
        _ = b.refresh()
        #expect(b.values == expected, "the folder as its device wrote it is read again")
        b.close()

        // An older generation: the folder as it was before a compacted past it.
        a.compact()
        try a.set(.string("later"), forKey: "k9")
        a.reachSyncPoint()  // signed: b reads a's write at once, not only once a's next mark came in time
        b = try fixture.open("b")
        #expect(b.value(forKey: "k9") == .string("later"))
        b.close()
        try copyFolder(real, to: folder)
        b = try fixture.open("b")
        defer { b.close() }
        #expect(b.value(forKey: "k9") == nil && b.status().warnings.contains { $0.kind == .refused && $0.message.contains("newest file is generation 1") })
    }

    @Test("a device's own folder rolled back while it is stopped: it does not open on the older copy, saying why, and writes nothing; another device refuses the older copy too; with its folder back it opens as before")
    func ownFolderRolledBackWhileStopped() throws {
        defer { fixture.cleanup() }
        var a = try fixture.open("a")
        let b = try fixture.open("b")
        defer { b.close() }
        for index in 0..<3 { try a.set(.string("old \(index)"), forKey: "k\(index)") }
        a.reachSyncPoint()
        let folder = fixture.folder(of: a), old = fixture.root.path + "/old", real = fixture.root.path + "/real"
        try copyFolder(folder, to: old)
        try a.set(.string("new 0"), forKey: "k0")
        a.reachSyncPoint()
        b.refresh(after: a)
        #expect(b.value(forKey: "k0") == .string("new 0"))
        a.close()
        try copyFolder(folder, to: real)
        try copyFolder(old, to: folder)
        let said = #expect(throws: KVStoreError.self) { a = try fixture.open("a") }
        #expect(said.map { "\($0)".contains("this device's own folder went back while it was stopped") } == true, "\(said.map { "\($0)" } ?? "")")
        #expect(try Files.read(folder + "/" + DeviceFolder.segmentName(1)) == Files.read(old + "/" + DeviceFolder.segmentName(1)),
                "nothing is built on the older copy")
        _ = b.refresh()
        #expect(b.value(forKey: "k0") == .string("new 0"))
        #expect(b.status().warnings.contains { $0.kind == .refused && $0.message.contains("went back") })
        try copyFolder(real, to: folder)
        a = try fixture.open("a")
        defer { a.close() }
        #expect(a.value(forKey: "k0") == .string("new 0"))
        try a.set(.string("after"), forKey: "k9")
        b.refresh(after: a)
        #expect(b.value(forKey: "k9") == .string("after"))
    }
}
