/// A device of a store, as the library and the command line name it.
public struct DeviceInfo: Hashable, Sendable {
    /// Its id.
    public let id: DeviceID
    /// Its name (its id, when its folder gives none that may be shown).
    public let name: String

    /// A device from its id and name.
    public init(id: DeviceID, name: String) {
        self.id = id
        self.name = name
    }
}
