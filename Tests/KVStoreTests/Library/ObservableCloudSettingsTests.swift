import Foundation
import Synchronization
import Observation
import Testing
@testable import KVStore

/// Seed 004's cloud settings, with the library's wrappers instead of @ObservableCloud's macros.
final class CloudSettings: ObservableCloudSettings {
    struct UserProfile: Codable, Equatable {
        var name: String
        var fontSize = 14
    }

    @CloudBacked("user_display_name") var username = "Fatbobman"   // a custom key
    @CloudBacked("theme") var theme = "light"
    @CloudBacked("fontSize") var fontSize = 14
    @CloudBacked("profile") var profile = UserProfile(name: "fat")
    @CloudBacked("nickname") var nickname: String? = nil
    @ObservableOnly var localCache = ""                             // observable, not synced
    var temporaryData = ""                                          // neither
}

/// Whether observation announced a change to what `read` touched (it announces once).
final class ObservationFlag: Sendable {
    private let fired = Mutex(false)

    init(_ read: () -> Void) {
        withObservationTracking(read) { [self] in fired.withLock { $0 = true } }
    }

    var changed: Bool { fired.withLock { $0 } }
}

extension LibraryTests {
    /// Seed 004: an observable settings object over either store.
    @Suite("ObservableCloudSettings")
    struct ObservableCloudSettingsTests {
        @Test("properties start at their defaults and are stored under prefix + key; the others are not stored",
              arguments: StoreKind.allCases)
        func storage(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let settings = CloudSettings(store: store, prefix: "myApp_")
                #expect(settings.username == "Fatbobman" && settings.theme == "light" && settings.nickname == nil)
                settings.username = "Ada"
                settings.theme = "dark"
                settings.profile.fontSize = 18
                settings.nickname = "countess"
                settings.localCache = "cache"
                settings.temporaryData = "temp"
                #expect(store.string(forKey: "myApp_user_display_name") == "Ada")
                #expect(store.string(forKey: "myApp_theme") == "dark")
                #expect(store.dictionary(forKey: "myApp_profile")?["fontSize"] as? Int == 18)
                #expect(Set(store.values.keys) == ["myApp_user_display_name", "myApp_theme", "myApp_profile", "myApp_nickname"])
                // A second object over the same store reads what the first wrote.
                let again = CloudSettings(store: store, prefix: "myApp_")
                #expect(again.username == "Ada" && again.profile == .init(name: "fat", fontSize: 18))
                #expect(again.localCache == "" && again.temporaryData == "")
                settings.nickname = nil
                #expect(store.object(forKey: "myApp_nickname") == nil)
            }
        }

        @Test("setting a property tells its observers; observable-only too; plain properties are not observed")
        func localChanges() async throws {
            let settings = CloudSettings(store: InMemoryKeyValueStore())
            let theme = ObservationFlag { _ = settings.theme }
            let cache = ObservationFlag { _ = settings.localCache }
            let plain = ObservationFlag { _ = settings.temporaryData }
            settings.theme = "dark"
            settings.localCache = "x"
            settings.temporaryData = "y"
            #expect(await eventually { theme.changed && cache.changed })
            #expect(!plain.changed)
        }

        @Test("another device's change updates the property and tells only its observers", arguments: StoreKind.allCases)
        func externalChange(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let settings = CloudSettings(store: store, prefix: "myApp_")
                let theme = ObservationFlag { _ = settings.theme }
                let fontSize = ObservationFlag { _ = settings.fontSize }
                let recorder = NotificationRecorder(store)
                try fixture.changeExternally(["myApp_theme": .string("dark")])
                try fixture.changeExternally(["sentinel": .bool(true)])
                #expect(await recorder.waitFor(["myApp_theme", "sentinel"], reason: NSUbiquitousKeyValueStoreServerChange))
                #expect(await eventually { theme.changed })
                #expect(settings.theme == "dark")
                #expect(!fontSize.changed)
            }
        }

        @Test("a removed key brings the default back, and observers hear of it", arguments: StoreKind.allCases)
        func removalRestoresDefault(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let settings = CloudSettings(store: store)
                settings.fontSize = 20
                let fontSize = ObservationFlag { _ = settings.fontSize }
                try fixture.changeExternally(["fontSize": nil])
                #expect(await eventually { fontSize.changed })
                #expect(settings.fontSize == 14)
            }
        }

        @Test("a stored value of another type reads as the default", arguments: StoreKind.allCases)
        func foreignValue(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let settings = CloudSettings(store: store)
                try fixture.changeExternally(["fontSize": .string("huge")])
                #expect(settings.fontSize == 14)
            }
        }

        @Test("a write refused for quota leaves the property as it was")
        func quotaRefusal() throws {
            let store = InMemoryKeyValueStore()
            let settings = CloudSettings(store: store)
            settings.username = "Ada"
            settings.username = String(repeating: "x", count: Limits.maxValueBytes)
            #expect(settings.username == "Ada")
        }
    }
}
