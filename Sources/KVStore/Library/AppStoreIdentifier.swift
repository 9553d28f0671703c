import Foundation

/// Which store is a program's own, as each of Apple's apps has the store its
/// identifier names: ``UbiquitousKeyValueStore/default`` opens it. The
/// identifier comes from, in order:
/// 1. the `KVFS_STORE` environment variable (unless empty);
/// 2. the identifier Foundation's `Bundle.main` reports: `CFBundleIdentifier`
///    in an `Info.plist` beside the executable (on Linux the main bundle is
///    the executable's folder, links resolved);
/// 3. the executable's name, made an identifier (``StoreIdentifier/init(sanitizing:)``:
///    `my app` opens `my-app`).
///
/// A variable or bundle identifier that is not an identifier is an error,
/// never a silent fallback: the program would otherwise write its keys into
/// a store nobody meant.
enum AppStoreIdentifier {
    /// The environment variable that names the store.
    static let variable = "KVFS_STORE"

    /// Why no identifier could be taken: where it came from, and what it breaks.
    struct Refusal: Error, CustomStringConvertible {
        let source: String
        let reason: InvalidStoreIdentifier

        var description: String { "\(source): \(reason)" }
    }

    /// The identifier these say, by the order above.
    static func resolve(environment: [String: String], bundleIdentifier: String?, executableName: String) throws(Refusal) -> StoreIdentifier {
        do throws(InvalidStoreIdentifier) {
            if let named = environment[variable], !named.isEmpty { return try StoreIdentifier(named) }
        } catch {
            throw Refusal(source: variable, reason: error)
        }
        do throws(InvalidStoreIdentifier) {
            if let bundleIdentifier { return try StoreIdentifier(bundleIdentifier) }
        } catch {
            throw Refusal(source: "the main bundle's CFBundleIdentifier (Info.plist)", reason: error)
        }
        guard let named = StoreIdentifier(sanitizing: executableName) else {
            throw Refusal(source: "the executable's name", reason: InvalidStoreIdentifier(
                text: executableName, reason: "it has no letter or digit to name a store by; set \(variable)"))
        }
        return named
    }

    /// This program's.
    static func current() throws(Refusal) -> StoreIdentifier {
        try resolve(environment: ProcessInfo.processInfo.environment, bundleIdentifier: Bundle.main.bundleIdentifier,
                    executableName: ProcessInfo.processInfo.processName)
    }
}
