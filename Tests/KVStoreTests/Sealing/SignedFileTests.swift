import Foundation
import Testing
@testable import KVStore

/// Issue 38 item 1, through the library: in a sealed store every file beside the records is a signed
/// file (docs/sealed.md § Signed files). A writer of the folder without keys plants, alters or puts back
/// one of them; no device's values, history, names or writing change, and each status names the file.
/// Each of these attacks changed what the devices saw before the files were signed.
@Suite("Sealed stores: the files beside the records are signed")
struct SignedFileTests {
    let fixture = SyncFixture()

    init() { TestSealing.seal(fixture.root.path + "/sync") }

    /// Two sealed devices that have read each other's one write.
    func twoDevices() throws -> (DeviceStore, DeviceStore, [StoreKey: PropertyListValue]) {
        let a = try fixture.open("a"), b = try fixture.open("b")
        try a.set(.string("only on a"), forKey: "onlya")
        try b.set(.string("from b"), forKey: "b")
        b.refresh(after: a)
        a.refresh(after: b)
        return (a, b, ["onlya": .string("only on a"), "b": .string("from b")])
    }

    func path(_ file: String, of store: DeviceStore) -> String { fixture.folder(of: store) + "/" + file }

    func plant(_ text: String, as file: String, in store: DeviceStore) throws {
        try Files.writeAtomically(path(file, of: store), Array(text.utf8))
    }

    /// Whether `store`'s status names the file at `path` as refused, saying `reason`.
    func refuses(_ store: DeviceStore, _ path: String, saying reason: String) -> Bool {
        store.status().warnings.contains { $0.kind == .refused && $0.file == path && $0.message.contains(reason) }
    }

    @Test("adopted.json planted in b's folder, retiring a, hides none of a's values, on a, on b, after a compaction or on a later device")
    func plantedAdoption() throws {
        defer { fixture.cleanup() }
        let (a, b, expected) = try twoDevices()
        defer { a.close(); b.close() }
        try plant(#"{"\#(a.deviceID.hex)":{"at":"1","generation":0,"retired":true,"upTo":"999999999999999999"}}"#,
                  as: Adoption.fileName, in: b)
        _ = a.refresh()
        _ = b.refresh()
        #expect(a.values == expected)
        #expect(b.values == expected)
        #expect(b.sync.retirement(of: a.deviceID) == nil)
        let planted = path(Adoption.fileName, of: b)
        #expect(refuses(a, planted, saying: "it is not signed"))
        #expect(refuses(b, planted, saying: "it is not signed"))
        #expect(fixture.warnings.contain("\(planted): refused: it is not signed"))
        b.compact()
        a.compact()
        let c = try fixture.open("c")
        defer { c.close() }
        c.refresh(after: a, b)
        #expect(c.values == expected)
    }

    @Test("retention.json planted with history off shortens no history, on the writer or another device")
    func plantedRetention() throws {
        defer { fixture.cleanup() }
        let (a, b, _) = try twoDevices()
        defer { a.close(); b.close() }
        for index in 0..<5 { try a.set(.integer(Int64(index)), forKey: "k") }
        b.refresh(after: a)
        #expect(a.history(forKey: "k").count == 5)
        #expect(b.history(forKey: "k").count == 5)
        try plant(#"{"bytes":0,"days":0,"stamp":"999999999999999999"}"#, as: RetentionSetting.fileName, in: a)
        _ = a.refresh()
        _ = b.refresh()
        #expect(a.retention == .standard)
        #expect(b.retention == .standard)
        a.compact()
        b.refresh(after: a)
        #expect(a.history(forKey: "k").count == 5)
        #expect(b.history(forKey: "k").count == 5)
        #expect(refuses(b, path(RetentionSetting.fileName, of: a), saying: "it is not signed"))
    }

    @Test("a signed retention.json put back after a newer one is a replay: refused, the newer one stands, after a restart too")
    func replayedRetention() throws {
        defer { fixture.cleanup() }
        var (a, b, _) = try twoDevices()
        defer { a.close(); b.close() }
        try a.setRetention(HistoryRetention(days: 10, bytes: 1 << 20))
        let older = try #require(try Files.read(path(RetentionSetting.fileName, of: a)))
        try a.setRetention(HistoryRetention(days: 90, bytes: 64 << 20))
        _ = b.refresh()
        #expect(b.retention == HistoryRetention(days: 90, bytes: 64 << 20))
        try Files.writeAtomically(path(RetentionSetting.fileName, of: a), older)
        _ = b.refresh()
        #expect(b.retention == HistoryRetention(days: 90, bytes: 64 << 20))
        #expect(refuses(b, path(RetentionSetting.fileName, of: a), saying: "replayed"))
        b.close()
        b = try fixture.open("b")
        #expect(b.retention == HistoryRetention(days: 90, bytes: 64 << 20), "the copy taken before the restart stands")
        #expect(refuses(b, path(RetentionSetting.fileName, of: a), saying: "replayed"))
        _ = a.refresh()
        #expect(a.retention == HistoryRetention(days: 90, bytes: 64 << 20), "the writer refuses its own older copy too")
        // Deleted, it is withheld: the copy taken stands (history's setting falls to no default meanwhile).
        try FileManager.default.removeItem(atPath: path(RetentionSetting.fileName, of: a))
        _ = b.refresh()
        #expect(b.retention == HistoryRetention(days: 90, bytes: 64 << 20))
        #expect(!b.status().warnings.contains { $0.file == path(RetentionSetting.fileName, of: a) })
    }

    @Test("writer.json rewritten with another state directory's inode and nonce locks no member out: it is refused and written anew")
    func forgedClaim() throws {
        defer { fixture.cleanup() }
        var (a, b, _) = try twoDevices()
        defer { a.close(); b.close() }
        let id = a.deviceID
        try plant(#"{"host":"x","nonce":"ffff","pid":1,"stateDirectory":"/x","stateInode":1}"#, as: WriterClaim.fileName, in: a)
        try a.set(.string("still writing"), forKey: "k")
        _ = a.refresh()  // the log says it at the refresh after
        #expect(fixture.warnings.contain("\(path(WriterClaim.fileName, of: a)): refused: it is not signed"))
        a.close()
        try plant(#"{"host":"x","nonce":"ffff","pid":1,"stateDirectory":"/x","stateInode":1}"#, as: WriterClaim.fileName, in: a)
        a = try fixture.open("a")
        #expect(a.deviceID == id, "the state directory is no copy: it keeps its device")
        try a.set(.string("after a restart"), forKey: "k")
        b.refresh(after: a)
        #expect(b.value(forKey: "k") == .string("after a restart"))
    }

    @Test("device.json rewritten as mallory renames no device")
    func spoofedName() throws {
        defer { fixture.cleanup() }
        let (a, b, _) = try twoDevices()
        defer { a.close(); b.close() }
        #expect(b.name(of: a.deviceID) == "a")
        try plant(#"{"name":"mallory"}"#, as: SyncDirectory.nameFile, in: a)
        _ = b.refresh()
        #expect(b.name(of: a.deviceID) == "a")
        #expect(b.history(forKey: "onlya").allSatisfy { b.name(of: $0.stamp.device) == "a" })
        #expect(refuses(b, path(SyncDirectory.nameFile, of: a), saying: "it is not signed"))
    }

    @Test("progress.json and waiting.json forged, or moved from another device's folder, are refused")
    func forgedProgressAndRequest() throws {
        defer { fixture.cleanup() }
        let (a, b, _) = try twoDevices()
        defer { a.close(); b.close() }
        try plant(#"{"at":"1","closed":true,"own":"999999999999999999","read":{}}"#, as: ReadProgress.fileName, in: a)
        try plant(#"{"of":["\#(b.deviceID.hex)"],"seconds":60}"#, as: WaitSignal.fileName, in: a)
        _ = b.refresh()
        #expect(refuses(b, path(ReadProgress.fileName, of: a), saying: "it is not signed"))
        #expect(refuses(b, path(WaitSignal.fileName, of: a), saying: "it is not signed"))
        #expect(b.sync.progress(of: a.deviceID)?.closed != true)
        // b's own signed progress, copied into a's folder: b signed it for its own folder, so it fails as a's.
        let bProgress = try #require(try Files.read(path(ReadProgress.fileName, of: b)))
        try Files.writeAtomically(path(ReadProgress.fileName, of: a), bProgress)
        _ = b.refresh()
        #expect(refuses(b, path(ReadProgress.fileName, of: a), saying: "its signature does not check"))
    }

    @Test("no signed file names a host, a path, a process or a device in the clear")
    func nothingInTheClear() throws {
        defer { fixture.cleanup() }
        let (a, b, _) = try twoDevices()
        defer { a.close(); b.close() }
        try a.setRetention(HistoryRetention(days: 9, bytes: 1 << 20))
        _ = try a.retire(b.deviceID, force: true)
        let host = ProcessInfo.processInfo.hostName
        for file in SignedFile.names {
            guard let bytes = try Files.read(path(file, of: a)) else { continue }
            #expect(SignedFile.looksSigned(bytes), "\(file) is signed")
            for secret in [host, fixture.root.path, "\"pid\"", "\"name\"", b.deviceID.hex, "\"days\""] where !secret.isEmpty {
                #expect(MembershipTests.range(of: Array(secret.utf8), in: bytes) == nil, "\(file) holds \(secret)")
            }
        }
    }

    @Test("a signed file holds up to a small file's size (64 KiB) less its overhead: that much is sealed and opens, one byte more is refused; a file past 64 KiB in a folder is refused as too large")
    func sizeLimit() throws {
        defer { fixture.cleanup() }
        let a = try fixture.open("a")
        defer { a.close() }
        let keys = try #require(a.sync.sealing?.keys)
        let most = SyncDirectory.smallFileLimit - SignedFile.overhead
        let full = try SignedFile.seal([UInt8](repeating: 0x61, count: most), file: "progress.json", keys: keys, sequence: 1)
        #expect(full.count == SyncDirectory.smallFileLimit)
        #expect(try SignedFile.open(full, file: "progress.json", device: a.deviceID, keys: keys).get().content.count == most)
        #expect(throws: KVStoreError.self) { try SignedFile.seal([UInt8](repeating: 0x61, count: most + 1), file: "progress.json", keys: keys, sequence: 1) }
        // Read from the folder: one byte past the limit, it is refused as too large, and named.
        let folder = a.sync.folder(of: a.deviceID)
        try Files.writeAtomically(path(WaitSignal.fileName, of: a), full + [0])
        #expect(folder.readSigned(WaitSignal.fileName, in: try folder.open()) == nil)
        #expect(refuses(a, path(WaitSignal.fileName, of: a), saying: "larger than a signed file can be"))
    }
}
