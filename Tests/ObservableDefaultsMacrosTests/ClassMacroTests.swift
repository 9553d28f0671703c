import Testing

@Suite("Class macros")
struct ClassMacroTests {
    @Test("@ObservableCloud backs each stored var, leaves marked, constant and computed ones, adds its members and conformance")
    func observableCloud() {
        expect("""
            @ObservableCloud
            public class CloudSettings {
                @CloudKey(keyValueStoreKey: "user_display_name")
                public var username: String = "Fatbobman"
                public var theme: String = "light"
                @ObservableOnly
                public var localCache: String = ""
                @Ignore
                public var temporaryData: String = ""
                let id = 1
                static var shared = 2
                var computed: Int { 3 }
            }
            """, expandsTo: #"""

            public class CloudSettings {
                public var username: String {
                    @storageRestrictions(initializes: _username)
                    init(initialValue) {
                        _username = initialValue
                    }
                    get {
                        _cloudStorage.value(of: self, \.username, forKey: "user_display_name", default: _username)
                    }
                    set {
                        _cloudStorage.set(newValue, of: self, \.username, forKey: "user_display_name")
                    }
                }

                private var _username: String = "Fatbobman"
                public var theme: String {
                    @storageRestrictions(initializes: _theme)
                    init(initialValue) {
                        _theme = initialValue
                    }
                    get {
                        _cloudStorage.value(of: self, \.theme, forKey: "theme", default: _theme)
                    }
                    set {
                        _cloudStorage.set(newValue, of: self, \.theme, forKey: "theme")
                    }
                }

                private var _theme: String = "light"
                public var localCache: String {
                    @storageRestrictions(initializes: _localCache)
                    init(initialValue) {
                        _localCache = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.localCache)
                        return _localCache
                    }
                    set {
                        _$observationRegistrar.withMutation(of: self, keyPath: \.localCache) {
                            _localCache = newValue
                        }
                    }
                }

                private var _localCache: String = ""
                public var temporaryData: String = ""
                let id = 1
                static var shared = 2
                var computed: Int { 3 }

                public let _$observationRegistrar = Observation.ObservationRegistrar()

                public private(set) var _cloudStorage = ObservableCloudStorage(prefix: "", syncImmediately: false, developmentMode: false)

                var _cloudObserver: CloudObservation? = nil

                var _prefix: String {
                    _cloudStorage.prefix
                }

                var _developmentMode_: Bool {
                    _cloudStorage.developmentMode
                }

                public init(prefix: String? = nil, syncImmediately: Bool = false, developmentMode: Bool = false, store: (any KVStore.KeyValueStore)? = nil) {
                    _cloudStorage = ObservableCloudStorage(prefix: prefix ?? "", syncImmediately: syncImmediately || false, developmentMode: developmentMode || false, store: store)
                    _cloudObserver = CloudObservation(host: self, prefix: _prefix)
                }
            }

            extension CloudSettings: Observation.Observable, ObservableCloudObject {
            }
            """#)
    }

    @Test("@ObservableCloud's options reach its storage; observeFirst makes unmarked properties observable only; autoInit: false writes no init")
    func observableCloudOptions() {
        expect("""
            @ObservableCloud(autoInit: false, prefix: "myApp_", observeFirst: true, syncImmediately: true, developmentMode: true)
            class CloudSettings {
                var local = "local"
                @CloudBacked(keyValueStoreKey: "user_theme")
                var theme: String = "light"
                @CloudKey(keyValueStoreKey: "k") var keyed = 0
            }
            """, expandsTo: #"""

            class CloudSettings {
                var local {
                    @storageRestrictions(initializes: _local)
                    init(initialValue) {
                        _local = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.local)
                        return _local
                    }
                    set {
                        _$observationRegistrar.withMutation(of: self, keyPath: \.local) {
                            _local = newValue
                        }
                    }
                }

                private var _local = "local"
                var theme: String {
                    @storageRestrictions(initializes: _theme)
                    init(initialValue) {
                        _theme = initialValue
                    }
                    get {
                        _cloudStorage.value(of: self, \.theme, forKey: "user_theme", default: _theme)
                    }
                    set {
                        _cloudStorage.set(newValue, of: self, \.theme, forKey: "user_theme")
                    }
                }

                private var _theme: String = "light"
                var keyed {
                    @storageRestrictions(initializes: _keyed)
                    init(initialValue) {
                        _keyed = initialValue
                    }
                    get {
                        _cloudStorage.value(of: self, \.keyed, forKey: "k", default: _keyed)
                    }
                    set {
                        _cloudStorage.set(newValue, of: self, \.keyed, forKey: "k")
                    }
                }

                private var _keyed = 0

                let _$observationRegistrar = Observation.ObservationRegistrar()

                private(set) var _cloudStorage = ObservableCloudStorage(prefix: "myApp_", syncImmediately: true, developmentMode: true)

                var _cloudObserver: CloudObservation? = nil

                var _prefix: String {
                    _cloudStorage.prefix
                }

                var _developmentMode_: Bool {
                    _cloudStorage.developmentMode
                }
            }

            extension CloudSettings: Observation.Observable, ObservableCloudObject {
            }
            """#)
    }

    @Test("@ObservableDefaults: members, options and the generated initializer")
    func observableDefaults() {
        expect("""
            @ObservableDefaults(ignoreExternalChanges: true, suiteName: "group", prefix: "myApp_")
            class Settings {
                var name: String = "Fatbobman"
                @DefaultsKey(userDefaultsKey: "years") var age: Int = 20
            }
            """, expandsTo: #"""

            class Settings {
                var name: String {
                    @storageRestrictions(initializes: _name)
                    init(initialValue) {
                        _name = initialValue
                    }
                    get {
                        _defaultsStorage.value(of: self, \.name, forKey: "name", default: _name)
                    }
                    set {
                        _defaultsStorage.set(newValue, of: self, \.name, forKey: "name")
                    }
                }

                private var _name: String = "Fatbobman"
                var age: Int {
                    @storageRestrictions(initializes: _age)
                    init(initialValue) {
                        _age = initialValue
                    }
                    get {
                        _defaultsStorage.value(of: self, \.age, forKey: "years", default: _age)
                    }
                    set {
                        _defaultsStorage.set(newValue, of: self, \.age, forKey: "years")
                    }
                }

                private var _age: Int = 20

                let _$observationRegistrar = Observation.ObservationRegistrar()

                private(set) var _defaultsStorage = ObservableDefaultsStorage(userDefaults: nil, suiteName: "group", prefix: "myApp_", ignoreExternalChanges: true)

                var _prefix: String {
                    _defaultsStorage.prefix
                }

                func observerStarter(observableKeysBlacklist: [String] = []) {
                    _defaultsStorage.startObserving(ignoring: observableKeysBlacklist)
                }

                init(userDefaults: Foundation.UserDefaults? = nil, ignoreExternalChanges: Bool? = nil, prefix: String? = nil) {
                    _defaultsStorage = ObservableDefaultsStorage(userDefaults: userDefaults ?? nil, suiteName: "group", prefix: prefix ?? "myApp_", ignoreExternalChanges: ignoreExternalChanges ?? true)
                    observerStarter()
                }
            }

            extension Settings: Observation.Observable, ObservableDefaultsObject {
            }
            """#)
    }

    @Test("misuse: on a struct, an enum; an option that must be a literal")
    func misuse() {
        expect("""
            @ObservableCloud
            struct Settings {
                var number = 1
            }
            @ObservableDefaults
            enum Choice {
                case a
            }
            @ObservableDefaults(observeFirst: flag)
            class Settings {
                var number = 1
            }
            @ObservableCloud
            class Incomplete {
                var number: Int
            }
            """, expandsTo: #"""

            struct Settings {
                var number = 1
            }
            enum Choice {
                case a
            }
            class Settings {
                var number = 1

                let _$observationRegistrar = Observation.ObservationRegistrar()

                private(set) var _defaultsStorage = ObservableDefaultsStorage(userDefaults: nil, suiteName: nil, prefix: "", ignoreExternalChanges: false)

                var _prefix: String {
                    _defaultsStorage.prefix
                }

                func observerStarter(observableKeysBlacklist: [String] = []) {
                    _defaultsStorage.startObserving(ignoring: observableKeysBlacklist)
                }

                init(userDefaults: Foundation.UserDefaults? = nil, ignoreExternalChanges: Bool? = nil, prefix: String? = nil) {
                    _defaultsStorage = ObservableDefaultsStorage(userDefaults: userDefaults ?? nil, suiteName: nil, prefix: prefix ?? "", ignoreExternalChanges: ignoreExternalChanges ?? false)
                    observerStarter()
                }
            }
            class Incomplete {
                var number: Int

                let _$observationRegistrar = Observation.ObservationRegistrar()

                private(set) var _cloudStorage = ObservableCloudStorage(prefix: "", syncImmediately: false, developmentMode: false)

                var _cloudObserver: CloudObservation? = nil

                var _prefix: String {
                    _cloudStorage.prefix
                }

                var _developmentMode_: Bool {
                    _cloudStorage.developmentMode
                }

                init(prefix: String? = nil, syncImmediately: Bool = false, developmentMode: Bool = false, store: (any KVStore.KeyValueStore)? = nil) {
                    _cloudStorage = ObservableCloudStorage(prefix: prefix ?? "", syncImmediately: syncImmediately || false, developmentMode: developmentMode || false, store: store)
                    _cloudObserver = CloudObservation(host: self, prefix: _prefix)
                }
            }

            extension Settings: Observation.Observable, ObservableDefaultsObject {
            }

            extension Incomplete: Observation.Observable, ObservableCloudObject {
            }
            """#, diagnostics: [
                diagnostic("@ObservableCloud applies to a class: this is a struct, whose copies could not share one store's values and observers",
                       line: 1, column: 1),
                diagnostic("@ObservableDefaults applies to a class: this is an enum, whose copies could not share one store's values and observers",
                       line: 5, column: 1),
                diagnostic("'observeFirst' must be written as true or false", line: 9, column: 35),
                // The class macro marks `number` @CloudBacked, which finds no default value.
                diagnostic("@CloudBacked property 'number' needs a default value (it is what the property starts as)", line: 15, column: 5),
            ])
    }
}
