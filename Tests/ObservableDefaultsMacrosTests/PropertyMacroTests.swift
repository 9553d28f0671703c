import Testing

@Suite("Property macros")
struct PropertyMacroTests {
    @Test("@CloudBacked keeps the declared value and reads and writes the store under the property's name")
    func cloudBacked() {
        expect("""
            @CloudBacked var number = 1
            """, expandsTo: #"""
            var number {
                @storageRestrictions(initializes: _number)
                init(initialValue) {
                    _number = initialValue
                }
                get {
                    _cloudStorage.value(of: self, \.number, forKey: "number", default: _number)
                }
                set {
                    _cloudStorage.set(newValue, of: self, \.number, forKey: "number")
                }
            }

            private var _number = 1
            """#)
    }

    @Test("@CloudBacked(keyValueStoreKey:) and @CloudKey name the key; the type annotation is kept")
    func cloudKeys() {
        expect("""
            @CloudBacked(keyValueStoreKey: "user_theme") public var theme: String = "light"
            @CloudKey(keyValueStoreKey: "user_display_name") @CloudBacked var username: String? = nil
            """, expandsTo: #"""
            public var theme: String {
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
            var username: String? {
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

            private var _username: String? = nil
            """#)
    }

    @Test("@DefaultsBacked and @DefaultsKey do the same over the UserDefaults storage")
    func defaultsBacked() {
        expect("""
            @DefaultsBacked var age = 109
            @DefaultsKey(userDefaultsKey: "firstName") @DefaultsBacked var name: String = "fat"
            @DefaultsBacked(userDefaultsKey: "myHeight") var height = 190
            """, expandsTo: #"""
            var age {
                @storageRestrictions(initializes: _age)
                init(initialValue) {
                    _age = initialValue
                }
                get {
                    _defaultsStorage.value(of: self, \.age, forKey: "age", default: _age)
                }
                set {
                    _defaultsStorage.set(newValue, of: self, \.age, forKey: "age")
                }
            }

            private var _age = 109
            var name: String {
                @storageRestrictions(initializes: _name)
                init(initialValue) {
                    _name = initialValue
                }
                get {
                    _defaultsStorage.value(of: self, \.name, forKey: "firstName", default: _name)
                }
                set {
                    _defaultsStorage.set(newValue, of: self, \.name, forKey: "firstName")
                }
            }

            private var _name: String = "fat"
            var height {
                @storageRestrictions(initializes: _height)
                init(initialValue) {
                    _height = initialValue
                }
                get {
                    _defaultsStorage.value(of: self, \.height, forKey: "myHeight", default: _height)
                }
                set {
                    _defaultsStorage.set(newValue, of: self, \.height, forKey: "myHeight")
                }
            }

            private var _height = 190
            """#)
    }

    @Test("@ObservableOnly keeps the value in the object and tells the registrar; @Ignore and the key markers add nothing")
    func observableOnlyAndMarkers() {
        expect("""
            @ObservableOnly var `default` = 190
            @Ignore var weight = 10
            """, expandsTo: #"""
            var `default` {
                @storageRestrictions(initializes: _default)
                init(initialValue) {
                    _default = initialValue
                }
                get {
                    _$observationRegistrar.access(self, keyPath: \.`default`)
                    return _default
                }
                set {
                    _$observationRegistrar.withMutation(of: self, keyPath: \.`default`) {
                        _default = newValue
                    }
                }
            }

            private var _default = 190
            var weight = 10
            """#)
    }

    @Test("misuse: a let, no default value, static, computed, observers, two bindings")
    func misuse() {
        expect("""
            @CloudBacked let a = 1
            @DefaultsBacked var b: Int
            @ObservableOnly static var c = 1
            @CloudBacked var d: Int { 1 }
            @CloudBacked var e = 1 { didSet {} }
            @CloudBacked var f = 1, g = 2
            @ObservableOnly lazy var h = 1
            """, expandsTo: #"""
            let a = 1
            var b: Int
            static var c = 1
            var d: Int { 1 }
            var e = 1 { didSet {} }
            var f = 1, g = 2
            lazy var h = 1
            """#, diagnostics: [
                diagnostic("@CloudBacked needs a 'var': 'a' is a 'let'", line: 1, column: 1),
                diagnostic("@DefaultsBacked property 'b' needs a default value (it is what the property starts as)", line: 2, column: 1),
                diagnostic("@ObservableOnly applies to an instance property: 'c' is static", line: 3, column: 1),
                diagnostic("@CloudBacked applies to a stored property: 'd' is computed", line: 4, column: 1),
                diagnostic("@CloudBacked does not support 'willSet' or 'didSet' on 'e': observe the object instead", line: 5, column: 1),
                diagnostic("accessor macro can only be applied to a single variable", line: 6, column: 1),
                diagnostic("peer macro can only be applied to a single variable", line: 6, column: 1),
                diagnostic("@ObservableOnly cannot make 'h' lazy", line: 7, column: 1),
            ])
    }
}
