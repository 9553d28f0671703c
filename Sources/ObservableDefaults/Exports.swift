// What a file that says `import ObservableDefaults` (and nothing else, as seed 004's samples do) needs
// to compile the macros' expansions: Observation (the registrar, `Observable`), Foundation (`UserDefaults`)
// and KVStore (the stores the cloud properties live in).
@_exported import Foundation
@_exported import KVStore
@_exported import Observation

/// ObservableDefaults' name for the types an `@ObservableCloud` property may
/// have: here any `Codable` type, stored as a property list (so `cat` on a
/// mount shows a struct as an XML dictionary).
public typealias CodableCloudPropertyListValue = Codable

/// ObservableDefaults' name for the types an `@ObservableDefaults` property
/// may have: here any `Codable` type, stored in `UserDefaults` as a property list.
public typealias CodableUserDefaultsPropertyListValue = Codable
