import Foundation
import Testing
@testable import KVStore

/// Seed 002: an onboarding manager over an injected store.
final class OnboardingManager {
    private let store: any KeyValueStore

    init(store: any KeyValueStore) { self.store = store }

    func shouldShowOnboarding() -> Bool { !store.bool(forKey: "hasCompletedOnboarding") }
    func completeOnboarding() { store.set(true, forKey: "hasCompletedOnboarding") }

    /// What's new shows after an update, not on the first install (onboarding shows then).
    func shouldShowWhatsNew(currentVersion: String) -> Bool {
        guard let last = store.string(forKey: "lastVersion") else { return false }
        return last != currentVersion
    }

    func updateVersion(to version: String) { store.set(version, forKey: "lastVersion") }

    var launchCount: Int64 { store.longLong(forKey: "launchCount") }
    func incrementLaunchCount() { store.set(launchCount + 1, forKey: "launchCount") }
    func shouldShowRatePrompt() -> Bool { launchCount > 0 && launchCount % 10 == 0 }
}

extension LibraryTests {
    @Suite("Scenario: onboarding (seed 002)")
    struct OnboardingScenarioTests {
        @Test("onboarding shows on first launch, not after it is completed", arguments: StoreKind.allCases)
        func onboarding(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let manager = OnboardingManager(store: store)
                #expect(manager.shouldShowOnboarding())
                manager.completeOnboarding()
                #expect(!manager.shouldShowOnboarding())
            }
        }

        @Test("what's new shows after a version change only", arguments: StoreKind.allCases)
        func whatsNew(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let manager = OnboardingManager(store: store)
                #expect(!manager.shouldShowWhatsNew(currentVersion: "1.0.0"))
                manager.updateVersion(to: "1.0.0")
                #expect(!manager.shouldShowWhatsNew(currentVersion: "1.0.0"))
                #expect(manager.shouldShowWhatsNew(currentVersion: "2.0.0"))
            }
        }

        @Test("the rate prompt shows every 10th launch", arguments: StoreKind.allCases)
        func ratePrompt(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let manager = OnboardingManager(store: store)
                #expect(!manager.shouldShowRatePrompt())
                var prompts: [Int64] = []
                for _ in 1...30 {
                    manager.incrementLaunchCount()
                    if manager.shouldShowRatePrompt() { prompts.append(manager.launchCount) }
                }
                #expect(prompts == [10, 20, 30])
                store.set(Int64(5), forKey: "launchCount")
                #expect(!manager.shouldShowRatePrompt())
                // `echo 10 > launchCount` on a mount makes a new key a string; longLong coerces it.
                store.set("10", forKey: "launchCount")
                #expect(manager.shouldShowRatePrompt())
            }
        }

        @Test("reset brings the in-memory store back to a first launch")
        func reset() {
            let store = InMemoryKeyValueStore()
            let manager = OnboardingManager(store: store)
            manager.completeOnboarding()
            manager.incrementLaunchCount()
            store.reset()
            #expect(manager.shouldShowOnboarding())
            #expect(manager.launchCount == 0)
        }
    }
}
