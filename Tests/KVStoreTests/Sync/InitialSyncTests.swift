import Foundation
import Testing
@testable import KVStore

/// InitialSyncChange (docs/sync.md § Change notifications): at opening, exactly the
/// keys whose visible entry differs from what this device saw when it last ran.
@Suite("InitialSyncChange")
struct InitialSyncTests {
    let fixture = SyncFixture()

    /// The keys of the InitialSyncChange lines in `store`'s change log.
    private func initialSyncKeys(_ store: DeviceStore) -> [[String]] {
        String(decoding: store.changeLogContents(), as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["reason"] as? String == "InitialSyncChange" else { return nil }
            return object["keys"] as? [String]
        }
    }

    @Test func aKeyCreatedAndRemovedWhileAwayIsNotListed() throws {
        let a = try fixture.open("a")
        defer { a.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "kept")
        try a.set(.integer(1), forKey: "removed")
        try a.set(.integer(1), forKey: "gone-before")
        try a.removeValue(forKey: "gone-before")
        var b = try fixture.open("b")
        b.close()
        try a.set(.integer(2), forKey: "ghost")     // created and removed while b is away
        try a.removeValue(forKey: "ghost")
        try a.removeValue(forKey: "removed")        // b saw it; now it is gone
        try a.set(.integer(3), forKey: "new")
        try a.set(.integer(4), forKey: "renamed-from")
        try a.rename("renamed-from", to: "renamed-to")
        b = try fixture.open("b")
        defer { b.close() }
        #expect(initialSyncKeys(b) == [["kept", "removed"], ["new", "removed", "renamed-to"]])  // as a new device, then back
    }
}
