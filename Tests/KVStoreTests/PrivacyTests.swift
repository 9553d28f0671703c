import Foundation
import Testing
@testable import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// docs/format.md § Privacy and links: what is stored is private — directories 0700,
/// files 0600 — and modes a user set are not loosened (issue 7.6).
@Suite("Private files")
struct PrivacyTests {
    @Test("under umask 022 every folder the store makes is 0700 and every file 0600; a mode the user set stays")
    func whatIsStoredIsPrivate() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let root = TemporaryFolder()
        defer { root.cleanup() }
        let state = root.sub("state-a").path
        #expect(mkdir(state, 0o750) == 0 && chmod(state, 0o750) == 0)  // the user's choice, kept
        let store = try openStore(root, device: "a")
        try store.set(.integer(1), forKey: "k")
        #expect(throws: KVStoreError.self) { try store.set(.data(Data(count: 2_000_000)), forKey: "big") }  // a change log line
        store.compact()
        let progress = root.sub("sync/devices/\(store.deviceID.hex)/" + ReadProgress.fileName).path
        store.close()

        var modes: [String: UInt32] = [:]
        for top in ["sync", "state-a"] {
            for (name, entry) in try fileTree(root.sub(top).path) { modes[top + "/" + name] = UInt32(entry[0]) }
        }
        #expect(modes.count > 8)
        for (name, mode) in modes {
            let expected: UInt32 = mode & UInt32(S_IFMT) == UInt32(S_IFDIR) ? 0o700 : 0o600
            #expect(mode & 0o7777 == expected, "\(name) is \(String(mode & 0o7777, radix: 8))")
        }
        var status = stat()
        #expect(stat(root.sub("sync").path, &status) == 0 && status.st_mode & 0o7777 == 0o700)
        #expect(stat(state, &status) == 0 && status.st_mode & 0o7777 == 0o750, "the state directory's mode was changed")

        #expect(chmod(progress, 0o400) == 0)  // made read-only by its owner: a rewrite keeps that
        let again = try openStore(root, device: "a")
        try again.set(.integer(2), forKey: "k")
        again.close()
        #expect(stat(progress, &status) == 0 && status.st_mode & 0o7777 == 0o400)
    }
}
