import Foundation
import Testing
@testable import KVStore

/// Seed 000: a favourites controller with an injected store.
final class FavouritesController: Sendable {
    enum County: String, CaseIterable, Comparable {
        case cornwall = "Cornwall", devon = "Devon", kent = "Kent", yorkshire = "Yorkshire"
        static func < (lhs: County, rhs: County) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    private static let key = "FavouriteCounties"
    private let store: any KeyValueStore

    init(store: any KeyValueStore) { self.store = store }

    /// The favourites, as stored (sorted, no duplicates).
    var favouriteCounties: [County] {
        (store.array(forKey: Self.key) as? [String])?.compactMap(County.init(rawValue:)) ?? []
    }

    func add(_ county: County) {
        guard !favouriteCounties.contains(county) else { return }
        store.set((favouriteCounties + [county]).sorted().map(\.rawValue), forKey: Self.key)
    }

    func remove(_ county: County) {
        guard favouriteCounties.contains(county) else { return }
        store.set(favouriteCounties.filter { $0 != county }.map(\.rawValue), forKey: Self.key)
    }

    func synchronise() -> Bool { store.synchronize() }
}

extension LibraryTests {
    @Suite("Scenario: favourites (seed 000)")
    struct FavouritesScenarioTests {
        typealias County = FavouritesController.County

        @Test("add keeps the list sorted and without duplicates", arguments: StoreKind.allCases)
        func add(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let controller = FavouritesController(store: store)
                #expect(controller.favouriteCounties.isEmpty)
                controller.add(.kent)
                controller.add(.cornwall)
                controller.add(.kent)
                #expect(controller.favouriteCounties == [.cornwall, .kent])
                #expect(store.array(forKey: "FavouriteCounties") as? [String] == ["Cornwall", "Kent"])
            }
        }

        @Test("remove takes one county out; removing one that is not there changes nothing", arguments: StoreKind.allCases)
        func remove(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let controller = FavouritesController(store: store)
                for county in County.allCases { controller.add(county) }
                controller.remove(.devon)
                controller.remove(.devon)
                #expect(controller.favouriteCounties == [.cornwall, .kent, .yorkshire])
            }
        }

        @Test("synchronise reaches the store, and another device's favourites show", arguments: StoreKind.allCases)
        func synchronise(kind: StoreKind) async throws {
            try await withStore(kind) { fixture, store in
                let controller = FavouritesController(store: store)
                #expect(controller.synchronise())
                try fixture.changeExternally(["FavouriteCounties": .array([.string("Devon"), .string("Yorkshire")])])
                #expect(await eventually { controller.favouriteCounties == [.devon, .yorkshire] })
            }
        }
    }
}
