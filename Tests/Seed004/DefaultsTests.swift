import Foundation
import ObservableDefaults
import Testing
import TestSupport

/// Seed 004's @ObservableDefaults classes over Foundation's `UserDefaults`.
@Suite("Seed 004: @ObservableDefaults")
struct DefaultsTests {
    @Test("properties start at their declared values and are stored under their names, as plain values")
    func storage() async {
        await withDefaultsSuite { defaults in
            let settings = QuickStartDefaults.Settings(userDefaults: defaults)
            #expect(settings.name == "Fatbobman" && settings.age == 20)
            settings.name = "Ada"
            settings.age = 36
            #expect(defaults.string(forKey: "name") == "Ada" && defaults.integer(forKey: "age") == 36)
            let again = QuickStartDefaults.Settings(userDefaults: defaults)
            #expect(again.name == "Ada" && again.age == 36)
        }
    }

    @Test("a write through another object tells this one's observers of that property only; a write through this one at once")
    func precise() async {
        await withDefaultsSuite { defaults in
            let settings = QuickStartDefaults.Settings(userDefaults: defaults)
            let elsewhere = QuickStartDefaults.Settings(userDefaults: defaults)
            let name = ObservationFlag { _ = settings.name }
            let age = ObservationFlag { _ = settings.age }
            elsewhere.name = "Grace"
            #expect(name.changed && !age.changed && settings.name == "Grace")
            let ownAge = ObservationFlag { _ = elsewhere.age }
            elsewhere.age = 1
            #expect(ownAge.changed)
        }
    }

    @Test("a direct UserDefaults write is read at once, and told once UserDefaults.didChangeNotification is posted")
    func directWrites() async {
        await withDefaultsSuite { defaults in
            let settings = QuickStartDefaults.Settings(userDefaults: defaults)
            let name = ObservationFlag { _ = settings.name }
            defaults.set("Linus", forKey: "name")
            #expect(settings.name == "Linus" && !name.changed)
            NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: defaults)
            #expect(name.changed)
        }
    }

    @Test("ignoreExternalChanges: another object's write tells no observer; the property still reads it")
    func ignoreExternalChanges() async {
        await withDefaultsSuite { defaults in
            let settings = QuickStartDefaults.Settings(userDefaults: defaults, ignoreExternalChanges: true)
            let name = ObservationFlag { _ = settings.name }
            QuickStartDefaults.Settings(userDefaults: defaults).name = "Grace"
            #expect(!name.changed && settings.name == "Grace")
        }
    }

    @Test("custom key, prefix; observable-only and ignored properties are not stored")
    func finerControl() async {
        await withDefaultsSuite { defaults in
            let settings = FinerControlDefaults.LocalSettings(userDefaults: defaults, prefix: "myApp_")
            let height = ObservationFlag { _ = settings.height }
            let weight = ObservationFlag { _ = settings.weight }
            settings.name = "thin"
            settings.age = 1
            settings.height = 180
            settings.weight = 70
            #expect(height.changed && !weight.changed)
            #expect(defaults.string(forKey: "myApp_firstName") == "thin" && defaults.integer(forKey: "myApp_age") == 1)
            #expect(defaults.object(forKey: "myApp_height") == nil && defaults.object(forKey: "myApp_weight") == nil)
            let again = FinerControlDefaults.LocalSettings(userDefaults: defaults, prefix: "myApp_")
            #expect(again.name == "thin" && again.height == 190 && again.weight == 10)
        }
    }

    @Test("observe first: only @DefaultsBacked is stored, under its key")
    func observeFirst() async {
        await withDefaultsSuite { defaults in
            let settings = ObserveFirstDefaults.LocalSettings(userDefaults: defaults)
            let name = ObservationFlag { _ = settings.name }
            settings.name = "x"
            settings.age = 2
            settings.height = 170
            #expect(name.changed)
            #expect(defaults.dictionaryRepresentation().keys.filter { ["name", "age", "myHeight"].contains($0) } == ["myHeight"])
            #expect(defaults.integer(forKey: "myHeight") == 170)
        }
    }

    @Test("a Codable property is stored as a dictionary; a removed or wrongly typed key reads as the default")
    func codableAndDefaults() async {
        await withDefaultsSuite { defaults in
            let store = CodableSupport.LocalStore(userDefaults: defaults)
            store.people.age = 11
            #expect(defaults.dictionary(forKey: "people")?["age"] as? Int == 11)
            #expect(CodableSupport.LocalStore(userDefaults: defaults).people.age == 11)
            defaults.set("not people", forKey: "people")
            #expect(store.people.name == "fat" && store.people.age == 10)
            let settings = QuickStartDefaults.Settings(userDefaults: defaults)
            settings.age = 40
            defaults.removeObject(forKey: "age")
            #expect(settings.age == 20)
        }
    }

    @Test("the seed's autoInit: false classes over UserDefaults.standard: declaration defaults, macro parameters, own initializer")
    func standardDefaults() {
        let standard = UserDefaults.standard
        defer { for key in ["username", "age", "myApp_fullName", "name"] { standard.removeObject(forKey: key) } }
        let user = DeclarationDefaults.User(username: "alice", age: 25)
        #expect(user.username == "alice" && user.age == 25 && standard.string(forKey: "username") == "alice")
        user.username = "bob"
        standard.removeObject(forKey: "username")
        standard.removeObject(forKey: "age")
        #expect(user.username == "guest" && user.age == 18)

        let settings = MacroParametersDefaults.Settings()
        let name = ObservationFlag { _ = settings.name }
        settings.name = "Full Name"
        #expect(name.changed && standard.string(forKey: "myApp_fullName") == "Full Name")
        // ignoreExternalChanges: true in the macro: another object's write tells nobody.
        let quiet = ObservationFlag { _ = settings.name }
        MacroParametersDefaults.Settings().name = "Other"
        #expect(!quiet.changed && settings.name == "Other")

        let own = OwnInitializers.Settings()
        let ownName = ObservationFlag { _ = own.name }
        QuickStartDefaults.Settings().name = "Heard"
        #expect(ownName.changed && own.name == "Heard")
    }
}
