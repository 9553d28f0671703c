import ObservableDefaults

// Seed 004's model code, every @ObservableDefaults and @ObservableCloud class
// of it, as the seed writes it (its comments included) under the one import
// line it has. Only the wrapping is ours: the samples reuse class names
// (`Settings`, `LocalSettings`, `CloudSettings`), so each sits in an enum named
// after the seed's section. What the seed uses but does not show (`Colors`,
// `FontStyle`) is in Unshown.swift; SwiftUI views are out of scope on Linux.

/// "After importing ObservableDefaults, you can annotate your class with @ObservableDefaults"
enum QuickStartDefaults {
    @ObservableDefaults
    class Settings {
        var name: String = "Fatbobman"
        var age: Int = 20
    }
}

/// "For cloud-synchronized data that automatically syncs across devices, use the @ObservableCloud macro"
enum QuickStartCloud {
    @ObservableCloud
    class CloudSettings {
        var number = 1
        var color: Colors = .red
        var style: FontStyle = .style1
    }
}

/// "The library provides additional macros for finer control" (UserDefaults)
enum FinerControlDefaults {
    @ObservableDefaults
    public class LocalSettings {
        @DefaultsKey(userDefaultsKey: "firstName")
        public var name: String = "fat"

        public var age = 109 // Automatically backed by UserDefaults

        @ObservableOnly
        public var height = 190 // Observable only, not persisted

        @Ignore
        public var weight = 10 // Neither observable nor persisted
    }
}

/// "Similar macro support with cloud-specific options"
enum FinerControlCloud {
    @ObservableCloud
    public class CloudSettings {
        @CloudKey(keyValueStoreKey: "user_display_name")
        public var username: String = "Fatbobman"

        public var theme: String = "light" // Automatically cloud-backed

        @ObservableOnly
        public var localCache: String = "" // Observable only, not synced to cloud

        @Ignore
        public var temporaryData: String = "" // Neither observable nor persisted
    }
}

/// "You can set parameters directly in the @ObservableDefaults macro"
enum MacroParametersDefaults {
    @ObservableDefaults(autoInit: false, ignoreExternalChanges: true, prefix: "myApp_")
    class Settings {
        @DefaultsKey(userDefaultsKey: "fullName")
        var name: String = "Fatbobman"
    }
}

/// "The cloud macro provides similar configuration options"
enum MacroParametersCloud {
    @ObservableCloud(
        autoInit: true,
        prefix: "myApp_",
        observeFirst: false,
        syncImmediately: true,
        developmentMode: false
    )
    class CloudSettings {
        @CloudKey(keyValueStoreKey: "user_theme")
        var theme: String = "light"
    }
}

/// "The @ObservableCloud macro supports development mode for testing without CloudKit setup"
enum DevelopmentMode {
    @ObservableCloud(developmentMode: true)
    class CloudSettings {
        var setting1: String = "value1" // Uses memory storage
        var setting2: Int = 42 // Uses memory storage
    }
}

/// "Both macros support "Observe First" mode"
enum ObserveFirstDefaults {
    @ObservableDefaults(observeFirst: true)
    public class LocalSettings {
        public var name: String = "fat" // Observable only
        public var age = 109 // Observable only

        @DefaultsBacked(userDefaultsKey: "myHeight")
        public var height = 190 // Observable and persisted to UserDefaults

        @Ignore
        public var weight = 10 // Neither observable nor persisted
    }
}

/// "Both macros support "Observe First" mode" (cloud)
enum ObserveFirstCloud {
    @ObservableCloud(observeFirst: true)
    public class CloudSettings {
        public var localSetting: String = "local" // Observable only
        public var tempData = "temp" // Observable only

        @CloudBacked(keyValueStoreKey: "user_theme")
        public var theme: String = "light" // Observable and synced to iCloud

        @Ignore
        public var cache = "cache" // Neither observable nor persisted
    }
}

/// "Both macros support properties conforming to Codable for complex data persistence"
enum CodableSupport {
    @ObservableDefaults
    class LocalStore {
        var people: People = .init(name: "fat", age: 10)
    }

    struct People: CodableUserDefaultsPropertyListValue {
        var name: String
        var age: Int
    }

    @ObservableCloud
    class CloudStore {
        var userProfile: UserProfile = .init(name: "fat", preferences: .init())
    }

    struct UserProfile: CodableCloudPropertyListValue {
        var name: String
        var preferences: UserPreferences
    }

    struct UserPreferences: Codable {
        var theme: String = "light"
        var fontSize: Int = 14
    }
}

/// "It's recommended to manage storage data separately from your main application state"
/// (over the finer-control samples, whose `name` and `username` its view shows)
enum SeparateState {
    typealias LocalSettings = FinerControlDefaults.LocalSettings
    typealias CloudSettings = FinerControlCloud.CloudSettings

    @Observable
    class ViewState {
        var selection = 10
        var isLogin = false
        let localSettings = LocalSettings() // UserDefaults-backed
        let cloudSettings = CloudSettings() // iCloud-backed
    }
}

/// "All persistent properties ... must be declared with default values"
enum DeclarationDefaults {
    @ObservableDefaults(autoInit: false) // @ObservableCloud(autoInit: false) is the same
    class User {
        var username = "guest" // ← Declaration default: "guest"
        var age: Int = 18 // ← Declaration default: 18

        init(username: String, age: Int) {
            self.username = username // Current value: "alice", default remains: "guest"
            self.age = age // Current value: 25, default remains: 18
            // ... other initialization code, like observerStarter(observableKeysBlacklist: [])
        }
    }
}
