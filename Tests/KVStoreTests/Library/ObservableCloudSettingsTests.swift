import Foundation
import Observation
import Synchronization
import Testing
@testable import KVStore

// Seed 004 (ObservableDefaults' README): its `@ObservableCloud` samples, each
// in a namespace of its own (they reuse class names). The edits, and no others:
// 1. `@ObservableCloud class X {` becomes `class X: ObservableCloudSettings {`,
//    and the macro's arguments (`developmentMode: true`) become the
//    initializer's, which has the generated one's parameters
//    (`prefix:syncImmediately:developmentMode:`, and `store:` first);
// 2. a stored property the macro backs by itself gets `@CloudBacked("name")`,
//    its name as its key (a property wrapper cannot learn its property's name);
//    `@CloudKey(keyValueStoreKey:)`, `@ObservableOnly`, `@Ignore` and
//    `CodableCloudPropertyListValue` stay as the seed writes them;
// 3. a custom `init` calls `super.init(…)` first, where the macro's own
//    initializer would start observation;
// 4. what the seed leaves out, written: `Colors` and `FontStyle`.

/// The seed's first sample, and the types it uses but does not show.
enum QuickStart {
    enum Colors: String, Codable { case red, green, blue }
    enum FontStyle: String, Codable { case style1, style2 }

    class CloudSettings: ObservableCloudSettings {
        @CloudBacked("number") var number = 1
        @CloudBacked("color") var color: Colors = .red
        @CloudBacked("style") var style: FontStyle = .style1
    }
}

/// The seed's cloud macro sample: custom key, observable-only and ignored properties.
enum CustomKeys {
    public class CloudSettings: ObservableCloudSettings {
        @CloudKey(keyValueStoreKey: "user_display_name")
        public var username: String = "Fatbobman"
        @CloudBacked("theme") public var theme: String = "light" // Automatically cloud-backed

        @ObservableOnly
        public var localCache: String = "" // Observable only, not synced to cloud

        @Ignore
        public var temporaryData: String = "" // Neither observable nor persisted
    }
}

/// The seed's Codable sample.
enum CodableValues {
    class CloudStore: ObservableCloudSettings {
        @CloudBacked("userProfile") var userProfile: UserProfile = .init(name: "fat", preferences: .init())
    }

    struct UserProfile: CodableCloudPropertyListValue, Equatable {
        var name: String
        var preferences: UserPreferences
    }

    struct UserPreferences: Codable, Equatable {
        var theme: String = "light"
        var fontSize: Int = 14
    }
}

/// The seed's development-mode sample (`@ObservableCloud(developmentMode: true)`).
enum DevelopmentMode {
    class CloudSettings: ObservableCloudSettings {
        @CloudBacked("setting1") var setting1: String = "value1" // Uses memory storage
        @CloudBacked("setting2") var setting2: Int = 42 // Uses memory storage
    }
}

/// The seed's declaration-default sample (`autoInit: false`), for the cloud.
enum DeclarationDefaults {
    class User: ObservableCloudSettings {
        @CloudBacked("username") var username = "guest" // ← Declaration default: "guest"
        @CloudBacked("age") var age: Int = 18 // ← Declaration default: 18

        init(store: any KeyValueStore, username: String, age: Int) {
            super.init(store: store)
            self.username = username // Current value: "alice", default remains: "guest"
            self.age = age // Current value: 25, default remains: 18
        }
    }
}

/// Whether observation announced a change to what `read` touched (it announces once).
final class ObservationFlag: Sendable {
    private let fired = Mutex(false)

    init(_ read: () -> Void) {
        withObservationTracking(read) { [self] in fired.withLock { $0 = true } }
    }

    var changed: Bool { fired.withLock { $0 } }
}

/// An in-memory store that counts `synchronize()` calls.
final class SynchronizeCounter: KeyValueStore {
    private let memory = InMemoryKeyValueStore()
    private let calls = Mutex(0)

    var count: Int { calls.withLock { $0 } }
    func value(forKey key: String) -> PropertyListValue? { memory.value(forKey: key) }
    var values: [StoreKey: PropertyListValue] { memory.values }
    func setValue(_ value: PropertyListValue, forKey key: String) throws(KVStoreError) { try memory.setValue(value, forKey: key) }
    func removeValue(forKey key: String) throws(KVStoreError) { try memory.removeValue(forKey: key) }
    var changes: AsyncStream<StoreChange> { memory.changes }
    func history(forKey key: String) -> [KeyVersion] { memory.history(forKey: key) }
    func restore(_ version: KeyVersion, forKey key: String) throws(KVStoreError) { try memory.restore(version, forKey: key) }

    func synchronize() -> Bool {
        calls.withLock { $0 += 1 }
        return true
    }
}

extension LibraryTests {
    /// Seed 004: observable settings objects over either store.
    @Suite("ObservableCloudSettings (seed 004)")
    struct ObservableCloudSettingsTests {
        @Test("properties start at their defaults and are stored under prefix + key, as readable values",
              arguments: StoreKind.allCases)
        func storage(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let settings = QuickStart.CloudSettings(store: store, prefix: "myApp_")
                #expect(settings.number == 1 && settings.color == .red && settings.style == .style1)
                settings.number = 2
                settings.color = .blue
                #expect(store.values == ["myApp_number": .integer(2), "myApp_color": .string("blue")])
                // A second object over the same store reads what the first wrote.
                let again = QuickStart.CloudSettings(store: store, prefix: "myApp_")
                #expect(again.number == 2 && again.color == .blue && again.style == .style1)
            }
        }

        @Test("a custom key is stored; observable-only and ignored properties are not", arguments: StoreKind.allCases)
        func customKeys(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let settings = CustomKeys.CloudSettings(store: store)
                settings.username = "Ada"
                settings.theme = "dark"
                settings.localCache = "cache"
                settings.temporaryData = "temp"
                #expect(store.values == ["user_display_name": .string("Ada"), "theme": .string("dark")])
                let again = CustomKeys.CloudSettings(store: store)
                #expect(again.username == "Ada" && again.localCache == "" && again.temporaryData == "")
            }
        }

        @Test("a Codable property is stored as a dictionary", arguments: StoreKind.allCases)
        func codable(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let cloud = CodableValues.CloudStore(store: store)
                cloud.userProfile.preferences.fontSize = 18
                #expect(store.dictionary(forKey: "userProfile")?["name"] as? String == "fat")
                #expect((store.dictionary(forKey: "userProfile")?["preferences"] as? [String: Any])?["fontSize"] as? Int == 18)
                #expect(CodableValues.CloudStore(store: store).userProfile.preferences == .init(theme: "light", fontSize: 18))
            }
        }

        @Test("setting a property tells its observers; observable-only too; plain and ignored ones are not observed")
        func localChanges() async throws {
            let settings = CustomKeys.CloudSettings(developmentMode: true)
            let theme = ObservationFlag { _ = settings.theme }
            let cache = ObservationFlag { _ = settings.localCache }
            let ignored = ObservationFlag { _ = settings.temporaryData }
            settings.theme = "dark"
            settings.localCache = "x"
            settings.temporaryData = "y"
            #expect(await poll(seconds: 10) { theme.changed && cache.changed })
            #expect(!ignored.changed)
        }

        @Test("another device's change updates the property and tells only its observers", arguments: StoreKind.allCases)
        func externalChange(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let settings = CustomKeys.CloudSettings(store: store, prefix: "myApp_")
                let theme = ObservationFlag { _ = settings.theme }
                let username = ObservationFlag { _ = settings.username }
                let recorder = NotificationRecorder(store)
                try fixture.changeExternally(["myApp_theme": .string("dark")])
                try await fixture.settle(recorder)
                #expect(await poll(seconds: 10) { theme.changed })
                #expect(settings.theme == "dark")
                #expect(!username.changed)
            }
        }

        @Test("ignoreExternalChanges: another device's change tells no observer; the property still reads it",
              arguments: StoreKind.allCases)
        func ignoreExternalChanges(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let settings = CustomKeys.CloudSettings(store: store, ignoreExternalChanges: true)
                let theme = ObservationFlag { _ = settings.theme }
                let recorder = NotificationRecorder(store)
                try fixture.changeExternally(["theme": .string("dark")])
                try await fixture.settle(recorder)
                #expect(!theme.changed)
                #expect(settings.theme == "dark")
            }
        }

        @Test("a removed key brings the declaration default back, and observers hear of it", arguments: StoreKind.allCases)
        func removalRestoresDefault(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let user = DeclarationDefaults.User(store: store, username: "alice", age: 25)
                #expect(user.username == "alice" && user.age == 25)
                user.username = "bob"
                let username = ObservationFlag { _ = user.username }
                try fixture.changeExternally(["username": nil, "age": nil])
                #expect(await poll(seconds: 10) { username.changed })
                #expect(user.username == "guest" && user.age == 18)
            }
        }

        @Test("a stored value of another type reads as the default", arguments: StoreKind.allCases)
        func foreignValue(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let settings = QuickStart.CloudSettings(store: store)
                try fixture.changeExternally(["number": .string("many"), "color": .string("mauve")])
                #expect(settings.number == 1 && settings.color == .red)
            }
        }

        @Test("a write refused for quota leaves the property as it was")
        func quotaRefusal() throws {
            let settings = CustomKeys.CloudSettings(developmentMode: true)
            settings.username = "Ada"
            settings.username = String(repeating: "x", count: Limits.maxValueBytes)
            #expect(settings.username == "Ada")
        }

        @Test("syncImmediately synchronizes the store after each write through a property, and only then")
        func syncImmediately() {
            let counted = SynchronizeCounter(), uncounted = SynchronizeCounter()
            let eager = QuickStart.CloudSettings(store: counted, syncImmediately: true)
            let lazy = QuickStart.CloudSettings(store: uncounted)
            for settings in [eager, lazy] {
                settings.number = 5
                settings.color = .green
                _ = settings.style
            }
            #expect(counted.count == 2 && uncounted.count == 0)
            #expect(eager.syncImmediately && !lazy.syncImmediately)
        }

        @Test("developmentMode keeps each object's properties in a store in memory of its own")
        func developmentMode() {
            let first = DevelopmentMode.CloudSettings(developmentMode: true)
            let second = DevelopmentMode.CloudSettings(developmentMode: true)
            #expect(first.store is InMemoryKeyValueStore && first.store !== second.store)
            first.setting2 = 7
            #expect(first.setting2 == 7 && second.setting2 == 42 && first.setting1 == "value1")
        }

        @Test("OBSERVABLE_DEFAULTS_DEV_MODE=true turns development mode on; without it the default store serves")
        func developmentModeFromEnvironment() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                await withDefaultStore(in: home) { _ in
                    // The seed's initializer call, as it writes it.
                    let cloudSettings = QuickStart.CloudSettings(prefix: "myApp_", syncImmediately: true, developmentMode: false)
                    #expect(cloudSettings.store === NSUbiquitousKeyValueStore.default)
                    cloudSettings.number = 3
                    #expect(NSUbiquitousKeyValueStore.default.longLong(forKey: "myApp_number") == 3)
                    setenv("OBSERVABLE_DEFAULTS_DEV_MODE", "true", 1)
                    #expect(QuickStart.CloudSettings(prefix: "myApp_").store is InMemoryKeyValueStore)
                }
            }
        }
    }
}
