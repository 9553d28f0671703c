import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    /// Issue 16 item 4: `.default` opens the app's own store; `init(storeIdentifier:)` a named one.
    @Suite("The app's own store")
    struct AppStoreIdentifierTests {
        @Test("KVFS_STORE, else the bundle's identifier, else the executable's name; a bad variable or bundle identifier is refused")
        func order() throws {
            func resolve(_ environment: [String: String], _ bundle: String?, _ name: String) throws -> String {
                try AppStoreIdentifier.resolve(environment: environment, bundleIdentifier: bundle, executableName: name).rawValue
            }
            #expect(try resolve(["KVFS_STORE": "com.example.env"], "com.example.bundle", "tool") == "com.example.env")
            #expect(try resolve([:], "com.example.bundle", "tool") == "com.example.bundle")
            #expect(try resolve(["KVFS_STORE": ""], nil, "tool") == "tool")
            #expect(try resolve([:], nil, "my tool") == "my-tool")
            #expect(throws: AppStoreIdentifier.Refusal.self) { try resolve(["KVFS_STORE": "a/b"], nil, "tool") }
            #expect(throws: AppStoreIdentifier.Refusal.self) { try resolve([:], "com.example bad", "tool") }
            #expect(throws: AppStoreIdentifier.Refusal.self) { try resolve([:], nil, "ÄÖ") }
            do {
                _ = try resolve(["KVFS_STORE": "a/b"], nil, "tool")
            } catch {
                #expect("\(error)".hasPrefix("KVFS_STORE: 'a/b' is not a store identifier: '/' is not allowed"))
            }
        }

        @Test("init(storeIdentifier:) opens the store of that name in the root; the same store is one device with .default, another store is apart")
        func namedStores() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                try await withDefaultStore(in: home) { home in
                    setenv("KVFS_STORE", "com.example.a", 1)
                    let own = NSUbiquitousKeyValueStore.default
                    #expect(UbiquitousKeyValueStore.defaultStoreIdentifier.rawValue == "com.example.a")
                    own.set("dark", forKey: "theme")
                    let same = try UbiquitousKeyValueStore(storeIdentifier: "com.example.a")
                    let other = try UbiquitousKeyValueStore(storeIdentifier: "com.example.b")
                    #expect(same.string(forKey: "theme") == "dark")   // at once: one device
                    #expect(other.string(forKey: "theme") == nil && other.usage == QuotaUsage())
                    other.set("light", forKey: "theme")
                    #expect(own.string(forKey: "theme") == "dark")
                    let root = home.appendingPathComponent("data/kvfs").path
                    #expect(StoreRoot.default.stores().map(\.rawValue) == ["com.example.a", "com.example.b"])
                    #expect(FileManager.default.fileExists(atPath: root + "/com.example.a/store-id"))
                    // Each store's device is the machine's: the state directory a mount of that store uses.
                    let states = try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("state/kvfs").path)
                    let mounts = try ["com.example.a", "com.example.b"].map { name in
                        DeviceStore.defaultStateDirectory(for: StoreRoot.default.folder(of: try StoreIdentifier(name))).lastPathComponent
                    }
                    #expect(Set(states) == Set(mounts) && states.allSatisfy { $0.hasPrefix("com.example.") }, "\(states)")
                    #expect(throws: InvalidStoreIdentifier.self) { try UbiquitousKeyValueStore(storeIdentifier: "a/b") }
                }
            }
        }
    }
}
