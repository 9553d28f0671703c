import Foundation
import Testing
@testable import KVStore

/// The store's JSON files as other devices, other versions and people read
/// them: written byte for byte as before, and read as before, down to the
/// fields of another type that readers have always let pass.
@Suite("The store's JSON files")
struct JSONFileTests {
    @Test("a change-log line keeps its field order and escapes as it always has")
    func changeLogLines() {
        let change = StoreChange(reason: .serverChange, keys: ["\u{1}\"\\", "a/b", "theme", "é", "\u{2028}", "😀"],
                                 time: Date(timeIntervalSince1970: 1_795_342_502.345))
        #expect(ChangeLog.line(change, sequence: 41) == """
            {"seq":41,"time":"2026-11-22T10:15:02.345Z","reason":"ServerChange","code":0,"keys":["\\u0001\\"\\\\","a/b","theme","é","\u{2028}","😀"]}

            """)
    }

    @Test("progress.json: sorted keys, stamps as decimal text; a field of another type counts as missing, a bad entry of read spoils the file")
    func progressFiles() {
        let device = DeviceID(hex: String(repeating: "ab", count: 16))!
        let progress = ReadProgress(own: HLCTimestamp(rawValue: 456), read: [device: HLCTimestamp(rawValue: 789)],
                                    closed: true, at: HLCTimestamp(rawValue: 123))
        let text = #"{"at":"123","closed":true,"own":"456","read":{"\#(device.hex)":"789"}}"# + "\n"
        #expect(progress.json() == text)
        #expect(ReadProgress(json: text) == progress)
        #expect(ReadProgress(own: nil, read: [:]).json() == #"{"read":{}}"# + "\n")
        #expect(ReadProgress(json: #"{"own":5,"closed":"yes","at":[],"read":{}}"#) == ReadProgress(own: nil, read: [:]))
        #expect(ReadProgress(json: #"{"read":{"\#(device.hex)":7}}"#) == nil)
        #expect(ReadProgress(json: #"{"read":{"not a device":"7"}}"#) == nil)
        #expect(ReadProgress(json: #"{"own":"5"}"#) == nil)
        #expect(ReadProgress(json: "junk") == nil)
    }

    @Test("writer.json: sorted keys and a newline; a claim needs its nonce and inode, the rest may be missing or of another type")
    func writerClaims() throws {
        let root = TemporaryFolder("kvfs-json")
        defer { root.cleanup() }
        let folder = try #require(try Folder.open(root.path))
        let deviceFolder = DeviceFolder(path: root.path)
        let claim = WriterClaim(statePath: "/state/a", stateInode: 42, nonce: WriterClaim.newNonce())
        try claim.claim(in: folder, of: deviceFolder)
        let mine = claim.mine
        #expect(try folder.read(WriterClaim.fileName) == Array("""
            {"host":"\(mine.host)","nonce":"\(mine.nonce)","pid":\(mine.pid),"stateDirectory":"\\/state\\/a","stateInode":42}

            """.utf8))
        #expect(WriterClaim.holder(in: folder, of: deviceFolder) == mine)
        try folder.writeAtomically(WriterClaim.fileName, Array(#"{"nonce":"n","stateInode":7,"pid":"x","host":null}"#.utf8))
        #expect(WriterClaim.holder(in: folder, of: deviceFolder) == WriterClaim.Holder(nonce: "n", stateInode: 7, statePath: "?", host: "?", pid: 0))
        try folder.writeAtomically(WriterClaim.fileName, Array(#"{"nonce":"n"}"#.utf8))
        #expect(WriterClaim.holder(in: folder, of: deviceFolder) == nil)
    }

    @Test("device.json: the name alone, no newline; a name of another type is none")
    func deviceNames() throws {
        let root = TemporaryFolder("kvfs-json")
        defer { root.cleanup() }
        let sync = SyncDirectory(path: root.path)
        let device = DeviceID.random()
        try sync.setName("Ann's laptop", of: device)
        let file = root.path + "/devices/" + device.hex + "/device.json"
        #expect(try Files.read(file) == Array(#"{"name":"Ann's laptop"}"#.utf8))
        #expect(sync.name(of: device) == "Ann's laptop")
        try Files.writeAtomically(file, Array(#"{"name":5}"#.utf8))
        #expect(sync.name(of: device) == nil)
    }
}
