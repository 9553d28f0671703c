import Foundation
import Testing
@testable import KVStore

// Seed 000 ("Building a Unit Tested, iCloud-backed Persistent Data Model"): the
// favourites controller, its protocol, Apple's store made to conform, and the
// mock, as the seed writes them. It compiles against `import KVStore` with no
// edit; written here is only what the seed leaves out (`County`, `countyNames`,
// the closing braces its listing drops) and the tests, whose bodies the seed
// does not show.

/// A county of the sample app.
enum County: String, CaseIterable, Comparable {
    case cornwall = "Cornwall", devon = "Devon", kent = "Kent", yorkshire = "Yorkshire"

    static func forName(_ name: String) -> County? { County(rawValue: name) }
    static func < (lhs: County, rhs: County) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension Array where Element == County {
    var countyNames: [String] { map(\.rawValue) }
}

protocol UbiquitousKeyValueStorageProviding: AnyObject {
    func set(_ anObject: Any?, forKey aKey: String)
    func array(forKey aKey: String) -> [Any]?
    func synchronize() -> Bool
}

extension NSUbiquitousKeyValueStore: UbiquitousKeyValueStorageProviding {}

/// The object responsible for managing the list of the user's favourite
/// counties.
final class FavouritesController {
    private static let favouriteCountiesKey = "FavouriteCounties"
    /// The counties that the user has chosen as their favourites.
    var favouriteCounties: [County] {
        let counties = (ubiquitousKeyValueStore.array(forKey: FavouritesController.favouriteCountiesKey) as? [String])?.compactMap({ County.forName($0) })
        return counties ?? []
    }
    private let ubiquitousKeyValueStore: UbiquitousKeyValueStorageProviding
    /// Initialises a new `FavouritesController` backed by the given ubiquitous
    /// key-value store.
    /// - Parameter ubiquitousKeyValueStore: The ubiquitous key-value store used
    /// to persist the user's favourite counties.
    init(ubiquitousKeyValueStore: UbiquitousKeyValueStorageProviding = NSUbiquitousKeyValueStore.default) {
        self.ubiquitousKeyValueStore = ubiquitousKeyValueStore
    }
    /// Adds the given county to the user's favourites.
    /// - Parameter county: The county to add to the user's favourites.
    func add(county: County) {
        guard favouriteCounties.firstIndex(of: county) == nil else { return }
        ubiquitousKeyValueStore.set((favouriteCounties + [county]).sorted().countyNames, forKey: FavouritesController.favouriteCountiesKey)
    }
    /// Removes the given county from the user's favourites.
    /// - Parameter county: The county to remove from the user's favourites.
    func remove(county: County) {
        guard let countyIndex = favouriteCounties.firstIndex(of: county) else { return }
        var mutableFavourites = favouriteCounties
        mutableFavourites.remove(at: countyIndex)
        ubiquitousKeyValueStore.set(mutableFavourites.countyNames, forKey: FavouritesController.favouriteCountiesKey)
    }
    /// Synchronises the receiver's ubiquitous key-value store.
    func synchronise() {
        _ = ubiquitousKeyValueStore.synchronize()
    }
}

private final class MockUbiquitousKeyValueStorageProvider: UbiquitousKeyValueStorageProviding {
    private(set) var receivedObject: Any?
    private(set) var receivedKey: String?
    var mockArrayForKey: [Any]?
    private(set) var receivedSynchronizeMessage = false
    func set(_ anObject: Any?, forKey aKey: String) {
        receivedObject = anObject
        receivedKey = aKey
    }
    func array(forKey aKey: String) -> [Any]? {
        receivedKey = aKey
        return mockArrayForKey
    }
    func synchronize() -> Bool {
        receivedSynchronizeMessage = true
        return false
    }
}

extension LibraryTests {
    @Suite("Seed 000: favourites")
    struct FavouritesScenarioTests {
        @Test("with the seed's mock: add sends the sorted names, remove the rest, synchronise reaches the store")
        func mock() {
            let mock = MockUbiquitousKeyValueStorageProvider()
            let controller = FavouritesController(ubiquitousKeyValueStore: mock)
            mock.mockArrayForKey = ["Kent"]
            controller.add(county: .cornwall)
            #expect(mock.receivedObject as? [String] == ["Cornwall", "Kent"])
            #expect(mock.receivedKey == "FavouriteCounties")
            mock.mockArrayForKey = ["Cornwall", "Kent"]
            controller.remove(county: .kent)
            #expect(mock.receivedObject as? [String] == ["Cornwall"])
            controller.synchronise()
            #expect(mock.receivedSynchronizeMessage)
        }

        @Test("over kvfs's store: add keeps the list sorted and without duplicates; remove takes one out")
        func addAndRemove() async throws {
            try await withStore(.syncDirectory) { _, store in
                let controller = FavouritesController(ubiquitousKeyValueStore: store as! NSUbiquitousKeyValueStore)
                #expect(controller.favouriteCounties.isEmpty)
                for county in [County.kent, .cornwall, .kent, .yorkshire] { controller.add(county: county) }
                #expect(controller.favouriteCounties == [.cornwall, .kent, .yorkshire])
                controller.remove(county: .kent)
                controller.remove(county: .devon)
                #expect(store.array(forKey: "FavouriteCounties") as? [String] == ["Cornwall", "Yorkshire"])
            }
        }

        @Test("another device's favourites show after synchronise")
        func otherDevice() async throws {
            try await withStore(.syncDirectory) { fixture, store in
                let here = FavouritesController(ubiquitousKeyValueStore: store as! NSUbiquitousKeyValueStore)
                let there = FavouritesController(ubiquitousKeyValueStore: try fixture.openDevice("there"))
                there.add(county: .devon)
                here.synchronise()
                #expect(here.favouriteCounties == [.devon])
            }
        }
    }
}
