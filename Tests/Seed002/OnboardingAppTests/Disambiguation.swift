// The one edit seed 002 needs next to `import KVStore`: KVStore and the app
// both declare `KeyValueStore`, so in a module that imports both, the plain
// name is ambiguous. A typealias in this module names the app's, and every
// file here may say `KeyValueStore` as the seed does. (KVStore's is
// `KVStore.KeyValueStore`.)
@testable import OnboardingApp

typealias KeyValueStore = OnboardingApp.KeyValueStore
