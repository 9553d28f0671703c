/// What differs between the cloud macros and the `UserDefaults` ones: names.
struct Flavor {
    /// The class macro: `ObservableCloud` or `ObservableDefaults`.
    let classMacro: String
    /// The property macro that stores a property: `CloudBacked` or `DefaultsBacked`.
    let backedMacro: String
    /// The marker naming a property's key: `CloudKey` or `DefaultsKey`.
    let keyMacro: String
    /// The label of the key argument of both: `keyValueStoreKey` or `userDefaultsKey`.
    let keyLabel: String
    /// The generated member that holds the object's storage.
    let storage: String
    /// The protocol the class is made to conform to.
    let conformance: String

    static let cloud = Flavor(classMacro: "ObservableCloud", backedMacro: "CloudBacked", keyMacro: "CloudKey",
                              keyLabel: "keyValueStoreKey", storage: "_cloudStorage", conformance: "ObservableCloudObject")
    static let defaults = Flavor(classMacro: "ObservableDefaults", backedMacro: "DefaultsBacked", keyMacro: "DefaultsKey",
                                 keyLabel: "userDefaultsKey", storage: "_defaultsStorage", conformance: "ObservableDefaultsObject")
}
