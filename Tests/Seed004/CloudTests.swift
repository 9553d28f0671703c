import Foundation
import KVStore
import ObservableDefaults
import Testing
import TestSupport

/// Not the seed's: an optional property, which the seed's macros also take.
@ObservableCloud
final class OptionalSettings {
    var nickname: String? = nil
    var fontSize: Int? = 14
}

/// Seed 004's @ObservableCloud classes over a real store, with another device sharing its sync directory.
@Suite("Seed 004: @ObservableCloud")
struct CloudTests {
    @Test("properties start at their declared values and are stored under their names, as readable values another device reads")
    func storage() async throws {
        try await withTwoDevices { devices in
            let settings = QuickStartCloud.CloudSettings(store: devices.this)
            #expect(settings.number == 1 && settings.color == .red && settings.style == .style1)
            settings.number = 2
            settings.color = .blue
            #expect(devices.this.values == ["number": .integer(2), "color": .string("blue")])
            let elsewhere = QuickStartCloud.CloudSettings(store: devices.other)
            await devices.otherSees { elsewhere.number == 2 && elsewhere.color == .blue && elsewhere.style == .style1 }
        }
    }

    @Test("another device's change to theme tells the observers of theme, not those of username or number")
    func preciseAcrossDevices() async throws {
        try await withTwoDevices { devices in
            let settings = FinerControlCloud.CloudSettings(store: devices.this)
            let numbers = QuickStartCloud.CloudSettings(store: devices.this)
            let theme = ObservationFlag { _ = settings.theme }
            let username = ObservationFlag { _ = settings.username }
            let number = ObservationFlag { _ = numbers.number }
            // The other device writes through its own object of the same class, as an app there would.
            FinerControlCloud.CloudSettings(store: devices.other).theme = "dark"
            await devices.settle()
            #expect(theme.changed)
            #expect(settings.theme == "dark")
            #expect(!username.changed && !number.changed)
        }
    }

    @Test("another process, as a device of its own (`kvfs set` with its own state directory), changes theme: theme's observers hear, number's do not")
    func anotherProcess() async throws {
        try MountEnvironment.requireBinary()
        try await withTwoDevices { devices in
            let settings = FinerControlCloud.CloudSettings(store: devices.this)
            let numbers = QuickStartCloud.CloudSettings(store: devices.this)
            let theme = ObservationFlag { _ = settings.theme }
            let number = ObservationFlag { _ = numbers.number }
            let set = try ChildProcess.run(MountEnvironment.kvfs, ["set", "theme", "dark", "--sync-dir", devices.syncDirectory.path,
                                                                   "--state-dir", devices.folder.sub("process").path])
            #expect(set.status == 0, "\(set)")
            #expect(await poll(seconds: 20) {
                _ = devices.this.synchronize()
                return theme.changed
            })
            await devices.settle()
            #expect(settings.theme == "dark" && !number.changed)
        }
    }

    @Test("a write through a property tells its observers at once; observable-only too; ignored ones are not observed or stored")
    func localChanges() async throws {
        try await withTwoDevices { devices in
            let settings = FinerControlCloud.CloudSettings(store: devices.this)
            let theme = ObservationFlag { _ = settings.theme }
            let username = ObservationFlag { _ = settings.username }
            let cache = ObservationFlag { _ = settings.localCache }
            let ignored = ObservationFlag { _ = settings.temporaryData }
            settings.theme = "dark"
            #expect(theme.changed && !username.changed && !cache.changed)
            settings.localCache = "x"
            settings.temporaryData = "y"
            #expect(cache.changed && !ignored.changed)
            settings.username = "Ada"
            #expect(devices.this.values == ["theme": .string("dark"), "user_display_name": .string("Ada")])
            let again = FinerControlCloud.CloudSettings(store: devices.this)
            #expect(again.username == "Ada" && again.localCache == "" && again.temporaryData == "")
        }
    }

    @Test("a removed or wrongly typed key reads as the declared default, and the removal is told")
    func defaultsComeBack() async throws {
        try await withTwoDevices { devices in
            let settings = QuickStartCloud.CloudSettings(store: devices.this)
            settings.number = 5
            settings.color = .green
            // The other device removes what it has seen: a removal of a key it does not have changes nothing.
            await devices.otherSees { devices.other.longLong(forKey: "number") == 5 }
            let number = ObservationFlag { _ = settings.number }
            devices.other.removeObject(forKey: "number")
            devices.other.set("mauve", forKey: "color")
            devices.other.set("many", forKey: "style")
            await devices.settle()
            #expect(number.changed)
            #expect(settings.number == 1 && settings.color == .red && settings.style == .style1)
        }
    }

    @Test("an optional property: nil is no key, and a removed or wrongly typed key reads as the declared default")
    func optionals() async throws {
        try await withTwoDevices { devices in
            let settings = OptionalSettings(store: devices.this)
            #expect(settings.nickname == nil && settings.fontSize == 14)
            settings.nickname = "fat"
            settings.fontSize = nil
            #expect(devices.this.values == ["nickname": .string("fat")])
            #expect(settings.nickname == "fat" && settings.fontSize == 14)
            // The other device writes over what it has seen: a write concurrent with "fat" in the same clock
            // tick may lose to it by the devices' order, and then this device sees no change.
            await devices.otherSees { devices.other.string(forKey: "nickname") == "fat" }
            let nickname = ObservationFlag { _ = settings.nickname }
            devices.other.set(3, forKey: "nickname")
            await devices.settle()
            #expect(nickname.changed && settings.nickname == nil)
            settings.nickname = nil
            #expect(devices.this.values["nickname"] == nil)
        }
    }

    @Test("a Codable property is stored as a dictionary and read back whole on the other device")
    func codable() async throws {
        try await withTwoDevices { devices in
            let cloud = CodableSupport.CloudStore(store: devices.this)
            cloud.userProfile.preferences.fontSize = 18
            let stored = devices.this.dictionary(forKey: "userProfile")
            #expect(stored?["name"] as? String == "fat")
            #expect((stored?["preferences"] as? [String: Any])?["fontSize"] as? Int == 18)
            let elsewhere = CodableSupport.CloudStore(store: devices.other)
            await devices.otherSees { elsewhere.userProfile.preferences.fontSize == 18 && elsewhere.userProfile.name == "fat" }
        }
    }

    @Test("observe first: only @CloudBacked is stored, under its key; the rest is observable only")
    func observeFirst() async throws {
        try await withTwoDevices { devices in
            let settings = ObserveFirstCloud.CloudSettings(store: devices.this)
            let local = ObservationFlag { _ = settings.localSetting }
            settings.localSetting = "changed"
            settings.tempData = "t"
            settings.theme = "dark"
            settings.cache = "c"
            #expect(local.changed)
            #expect(devices.this.values == ["user_theme": .string("dark")])
        }
    }

    @Test("macro parameters: prefix and custom key; syncImmediately synchronizes after each write through a property")
    func macroParameters() {
        let counter = SynchronizeCounter()
        let settings = MacroParametersCloud.CloudSettings(store: counter)
        settings.theme = "dark"
        _ = settings.theme
        #expect(counter.values == ["myApp_user_theme": .string("dark")] && counter.count == 1)
        let lazy = QuickStartCloud.CloudSettings(store: counter)
        lazy.number = 3
        #expect(counter.count == 1)
        // The initializer's arguments override the macro's.
        let other = MacroParametersCloud.CloudSettings(prefix: "other_", store: counter)
        other.theme = "light"
        #expect(counter.values["other_user_theme"] == .string("light"))
    }

    @Test("development mode keeps each object's properties in memory of its own")
    func developmentMode() {
        let first = DevelopmentMode.CloudSettings(), second = DevelopmentMode.CloudSettings()
        #expect(first._developmentMode_ && first._cloudStorage.store is InMemoryKeyValueStore)
        #expect(first._cloudStorage.store !== second._cloudStorage.store)
        first.setting2 = 7
        #expect(first.setting2 == 7 && second.setting2 == 42 && first.setting1 == "value1")
    }

    @Test("a write the store refuses for quota leaves the property as it was")
    func quotaRefusal() throws {
        let settings = FinerControlCloud.CloudSettings(developmentMode: true)
        settings.username = "Ada"
        settings.username = String(repeating: "x", count: Limits.maxValueBytes)
        #expect(settings.username == "Ada")
    }

    @Test("the seed's calls over the app's own store (.default), its environment switch, and autoInit: false initializers")
    func defaultStore() async {
        let home = TemporaryFolder("kvfs-seed004-home")
        defer { home.cleanup() }
        await #expect(processExitsWith: .success) { [home = home.path as String] in
            setenv("XDG_DATA_HOME", "\(home)/data", 1)
            setenv("XDG_STATE_HOME", "\(home)/state", 1)
            setenv("KVFS_STORE", "default", 1)
            // The seed's initializer call, as it writes it.
            let cloudSettings = MacroParametersCloud.CloudSettings(prefix: "myApp_", syncImmediately: true, developmentMode: false)
            #expect(cloudSettings._cloudStorage.store === NSUbiquitousKeyValueStore.default)
            cloudSettings.theme = "dark"
            #expect(NSUbiquitousKeyValueStore.default.string(forKey: "myApp_user_theme") == "dark")
            // Another device of the default store: the app's own initializers observe it.
            let devices = try! TwoDevices(syncDirectory: URL(fileURLWithPath: "\(home)/data/kvfs/default"))
            let own = OwnInitializers.CloudSettings()
            let user = OwnInitializers.User(username: "alice", age: 25)
            let state = SeparateState.ViewState()
            let theme = ObservationFlag { _ = own.theme }
            let username = ObservationFlag { _ = state.cloudSettings.username }
            #expect(user.username == "alice" && user.age == 25 && own.theme == "light")
            // The other device removes what it has seen: a removal of a key it does not have changes nothing.
            await devices.otherSees { devices.other.string(forKey: "username") == "alice" }
            devices.other.set("dark", forKey: "theme")
            devices.other.removeObject(forKey: "username")
            devices.other.set("Grace", forKey: "user_display_name")
            #expect(await poll(seconds: 20) {
                _ = NSUbiquitousKeyValueStore.default.synchronize()
                return theme.changed && username.changed && own.theme == "dark" && user.username == "guest"
            })
            #expect(user.age == 25 && state.cloudSettings.username == "Grace")
            // The environment switch: development mode without saying so.
            #expect(!QuickStartCloud.CloudSettings()._developmentMode_)
            setenv("OBSERVABLE_DEFAULTS_DEV_MODE", "true", 1)
            #expect(QuickStartCloud.CloudSettings()._cloudStorage.store is InMemoryKeyValueStore)
            #expect(OwnInitializers.CloudSettings()._cloudObserver == nil)
            unsetenv("OBSERVABLE_DEFAULTS_DEV_MODE")
            setenv("XCODE_RUNNING_FOR_PREVIEWS", "1", 1)
            #expect(QuickStartCloud.CloudSettings()._developmentMode_)
            devices.close()
        }
    }
}
