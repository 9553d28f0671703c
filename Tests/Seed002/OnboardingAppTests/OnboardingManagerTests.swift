// Seed 002's tests, verbatim (only these comments and the imports are added;
// the seed's separate snippets are one class here). They run against the
// seed's own InMemoryKeyValueStore, in a file that also imports KVStore.
import XCTest
import KVStore
@testable import OnboardingApp

class OnboardingManagerTests: XCTestCase {
    var store: InMemoryKeyValueStore!
    var sut: OnboardingManager!

    override func setUp() {
        store = InMemoryKeyValueStore()
        sut = OnboardingManager(store: store)
    }

    override func tearDown() {
        store.reset()
    }

    func test_shouldShowOnboarding_onFirstLaunch_returnsTrue() {
        // Fresh store = first launch
        XCTAssertTrue(sut.shouldShowOnboarding())
    }

    func test_shouldShowOnboarding_afterCompletion_returnsFalse() {
        sut.completeOnboarding()
        XCTAssertFalse(sut.shouldShowOnboarding())
    }

    func test_shouldShowWhatsNew_onFirstInstall_returnsFalse() {
        // No previous version = first install, show onboarding instead
        XCTAssertFalse(sut.shouldShowWhatsNew(currentVersion: "1.0.0"))
    }

    func test_shouldShowWhatsNew_whenVersionChanged_returnsTrue() {
        sut.updateVersion(to: "1.0.0")
        XCTAssertTrue(sut.shouldShowWhatsNew(currentVersion: "2.0.0"))
    }

    func test_shouldShowWhatsNew_whenVersionSame_returnsFalse() {
        sut.updateVersion(to: "1.0.0")
        XCTAssertFalse(sut.shouldShowWhatsNew(currentVersion: "1.0.0"))
    }

    func test_shouldShowRatePrompt_atLaunchCount10_returnsTrue() {
        store.setInt(10, forKey: "launchCount")
        XCTAssertTrue(sut.shouldShowRatePrompt())
    }

    func test_shouldShowRatePrompt_atLaunchCount5_returnsFalse() {
        // 5 % 10 != 0, so no prompt
        store.setInt(5, forKey: "launchCount")
        XCTAssertFalse(sut.shouldShowRatePrompt())
    }

    func test_incrementLaunchCount_incrementsFromZero() {
        sut.incrementLaunchCount()
        XCTAssertEqual(sut.launchCount, 1)
    }
}
