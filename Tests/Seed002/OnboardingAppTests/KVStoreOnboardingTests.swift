// Seed 002's manager over kvfs's stores, through the app's own adapter
// (OnboardingApp/KVStore+KeyValueStore.swift): what the app runs in production.
import Foundation
import KVStore
@testable import OnboardingApp
import TestSupport
import Testing

// KVStore's in-memory store, named module-qualified beside the seed's own
// InMemoryKeyValueStore (docs/swift.md § Name clashes), serves as the app's store too.
extension KVStore.InMemoryKeyValueStore: KeyValueStore {}

@Suite("Seed 002 over kvfs's stores")
struct KVStoreOnboardingTests {
    @Test("KVStore's in-memory store, module-qualified, behaves as the seed's own")
    func kvfsInMemoryStore() {
        let store = KVStore.InMemoryKeyValueStore()
        let sut = OnboardingManager(store: store)
        #expect(sut.shouldShowOnboarding())
        #expect(!sut.shouldShowWhatsNew(currentVersion: "1.0.0"))
        sut.completeOnboarding()
        sut.updateVersion(to: "1.0.0")
        #expect(!sut.shouldShowOnboarding())
        #expect(sut.shouldShowWhatsNew(currentVersion: "2.0.0"))
        store.setInt(10, forKey: "launchCount")
        #expect(sut.shouldShowRatePrompt())
        store.reset()
        #expect(sut.shouldShowOnboarding() && sut.launchCount == 0)
    }

    @Test("two devices of one sync directory: what one completes, the other does not show again")
    func twoDevices() throws {
        let folder = TemporaryFolder("kvfs-library-seed002")
        defer { folder.cleanup() }
        func device(_ name: String) throws -> NSUbiquitousKeyValueStore {
            try NSUbiquitousKeyValueStore(syncDirectory: folder.sub("sync"), stateDirectory: folder.sub(name), deviceName: name)
        }
        let phone = try device("phone"), laptop = try device("laptop")
        let onPhone = OnboardingManager(store: phone), onLaptop = OnboardingManager(store: laptop)
        onPhone.completeOnboarding()
        onPhone.updateVersion(to: "1.0.0")
        for _ in 1...10 { onPhone.incrementLaunchCount() }
        #expect(laptop.synchronize())
        #expect(!onLaptop.shouldShowOnboarding())
        #expect(onLaptop.launchCount == 10 && onLaptop.shouldShowRatePrompt())
        #expect(onLaptop.shouldShowWhatsNew(currentVersion: "1.1.0"))
        #expect(laptop.object(forKey: "hasCompletedOnboarding") as? Bool == true)
    }
}
