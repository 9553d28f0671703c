import Foundation
import Testing
@testable import KVStore

/// Seed 003's to-dos the Swift way: Codable items kept by key (`set(encodable:forKey:)`),
/// one key each, plus a list. (Seed003/ has the seed's own NSCoding model, ported as it is.)
struct TodoItem: Codable, Equatable, Identifiable {
    var id = UUID()
    var content: String
    var completed = false
}

final class TodoRepository {
    private let store: any KeyValueStore

    init(store: any KeyValueStore) { self.store = store }

    private func key(_ id: UUID) -> String { "todo." + id.uuidString }

    func save(_ item: TodoItem) throws { try store.set(encodable: item, forKey: key(item.id)) }
    func load(_ id: UUID) throws -> TodoItem? { try store.decodable(TodoItem.self, forKey: key(id)) }
    func delete(_ id: UUID) { store.removeObject(forKey: key(id)) }

    func saveList(_ items: [TodoItem], as name: String) throws { try store.set(encodable: items, forKey: name) }
    func loadList(_ name: String) throws -> [TodoItem]? { try store.decodable([TodoItem].self, forKey: name) }
}

extension LibraryTests {
    @Suite("Seed 003 as Codable values")
    struct TodoScenarioTests {
        @Test("an item is saved as a readable dictionary and loads back equal", arguments: StoreKind.allCases)
        func saveAndLoad(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let repository = TodoRepository(store: store)
                let item = TodoItem(content: "Sample content")
                #expect(!item.completed)
                try repository.save(item)
                #expect(try repository.load(item.id) == item)
                let stored = store.dictionary(forKey: "todo." + item.id.uuidString)
                #expect(stored?["content"] as? String == "Sample content")
                #expect(stored?["id"] as? String == item.id.uuidString)
            }
        }

        @Test("a missing item loads as nil; deleting removes; deleting nothing is safe", arguments: StoreKind.allCases)
        func missingAndDelete(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let repository = TodoRepository(store: store)
                #expect(try repository.load(UUID()) == nil)
                let item = TodoItem(content: "to delete")
                try repository.save(item)
                repository.delete(item.id)
                #expect(try repository.load(item.id) == nil)
                repository.delete(UUID())
                #expect(store.values.isEmpty)
            }
        }

        @Test("a list of items is saved, loaded and filtered", arguments: StoreKind.allCases)
        func list(kind: StoreKind) async throws {
            try await withStore(kind) { _, store in
                let repository = TodoRepository(store: store)
                let items = [TodoItem(content: "one"), TodoItem(content: "two", completed: true)]
                try repository.saveList(items, as: "todos")
                let loaded = try #require(try repository.loadList("todos"))
                #expect(loaded == items)
                #expect(loaded.filter(\.completed).map(\.content) == ["two"])
                #expect(try repository.loadList("other") == nil)
            }
        }
    }
}
