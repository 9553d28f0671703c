// Seed 002: the manager its tests exercise. The seed shows only the tests, so
// this is written from what they expect.
import KVStore

/// Decides when to show onboarding, "what's new" and the rating prompt.
final class OnboardingManager {
    private let store: KeyValueStore

    /// In the app, kvfs's store (Apple's `NSUbiquitousKeyValueStore.default`); in tests, an in-memory one.
    init(store: KeyValueStore = NSUbiquitousKeyValueStore.default) {
        self.store = store
    }

    func shouldShowOnboarding() -> Bool { !store.bool(forKey: "hasCompletedOnboarding") }
    func completeOnboarding() { store.setBool(true, forKey: "hasCompletedOnboarding") }

    /// "What's new" shows after an update, not on the first install (onboarding shows then).
    func shouldShowWhatsNew(currentVersion: String) -> Bool {
        guard let last = store.string(forKey: "lastVersion") else { return false }
        return last != currentVersion
    }

    func updateVersion(to version: String) { store.setString(version, forKey: "lastVersion") }

    var launchCount: Int { store.integer(forKey: "launchCount") }
    func incrementLaunchCount() { store.setInt(launchCount + 1, forKey: "launchCount") }
    func shouldShowRatePrompt() -> Bool { launchCount > 0 && launchCount % 10 == 0 }
}
