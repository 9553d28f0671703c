import ObservableDefaults

// What seed 004's samples use without showing it, and the classes around the
// seed's code that is no class of its own: the `autoInit: false` initializers
// ("If you set autoInit to false for either macro, you need to create your own
// initializer"), and `User` under `@ObservableCloud(autoInit: false)`, which the
// seed says "is the same".

extension QuickStartCloud {
    enum Colors: String, CodableCloudPropertyListValue { case red, green, blue }
    enum FontStyle: String, CodableCloudPropertyListValue { case style1, style2 }
}

/// The seed's own initializers, each in a class around it.
enum OwnInitializers {
    // For @ObservableDefaults
    @ObservableDefaults(autoInit: false)
    class Settings {
        var name = "Fatbobman"

        init() {
            observerStarter() // Start listening for UserDefaults changes
        }
    }

    // For @ObservableCloud
    @ObservableCloud(autoInit: false)
    class CloudSettings {
        var theme = "light"

        init() {
            // Start Cloud Observation only in production mode
            if !_developmentMode_ {
                _cloudObserver = CloudObservation(host: self, prefix: _prefix)
            }
        }
    }

    /// The declaration-default sample under the cloud macro.
    @ObservableCloud(autoInit: false)
    class User {
        var username = "guest"
        var age: Int = 18

        init(username: String, age: Int) {
            self.username = username
            self.age = age
            if !_developmentMode_ {
                _cloudObserver = CloudObservation(host: self, prefix: _prefix)
            }
        }
    }
}
