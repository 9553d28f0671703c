// Seed 003's Quick specs as Swift Testing tests (Quick and Nimble are not
// here): one test per `it`, with the expectations the seed's spec list names
// ("save to user defaults, load from user defaults, delete from user defaults,
// optionally returns the Todo, avoid failing when deleting nothing").
// The storage specs run in a child process each (an exit test) whose
// `NSUbiquitousKeyValueStore.default` is a temporary store, never the user's.
import Foundation
import Testing
@testable import KVStore

extension LibraryTests {
    @Suite("Seed 003: a TodoModel saves itself under its UUID")
    struct TodoModelTests {
        // describe("TodoModel") / context("after init")
        @Test("set item with given content")
        func content() { #expect(TodoModel(content: "Sample content").content == "Sample content") }

        @Test("set item with completed false by default")
        func notCompleted() { #expect(!TodoModel(content: "Sample content").completed) }

        @Test("set uuid")
        func uuid() { #expect(TodoModel(content: "a").getUUID() != TodoModel(content: "a").getUUID()) }

        // context("using local storage")
        @Test("save/load to/from user defaults")
        func saveAndLoad() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                await withDefaultStore(in: home) { _ in
                    let todo = TodoModel(content: "Sample content")
                    todo.completed = true
                    todo.saveLocally()
                    let storedTodo = TodoModel.loadLocally(todo.getUUID())
                    #expect(storedTodo?.content == "Sample content")
                    #expect(storedTodo?.completed == true)
                    #expect(storedTodo?.getUUID() == todo.getUUID())
                    // Kept as data (a keyed archive), which every device reads back the same.
                    #expect(NSUbiquitousKeyValueStore.default.data(forKey: todo.getUUID().uuidString)?.starts(with: Data("bplist00".utf8)) == true)
                }
            }
        }

        @Test("retrieves no object safely")
        func loadMissing() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                await withDefaultStore(in: home) { _ in
                    #expect(TodoModel.loadLocally(NSUUID()) == nil)
                }
            }
        }

        @Test("deletes from user defaults")
        func delete() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                await withDefaultStore(in: home) { _ in
                    let todo = TodoModel(content: "Sample content")
                    todo.saveLocally()
                    todo.deleteLocally()
                    #expect(TodoModel.loadLocally(todo.getUUID()) == nil)
                }
            }
        }

        @Test("deletes nothing safely")
        func deleteNothing() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                await withDefaultStore(in: home) { _ in
                    let notSavedTodo = TodoModel(content: "Not in userdefaults")
                    notSavedTodo.deleteLocally()
                    #expect(NSUbiquitousKeyValueStore.default.dictionaryRepresentation.isEmpty)
                }
            }
        }

        @Test("a TodosModel saves its list under a key, loads it back, filters it and deletes it")
        func list() async {
            let home = temporaryHome()
            defer { try? FileManager.default.removeItem(atPath: home) }
            await #expect(processExitsWith: .success) { [home = home as String] in
                await withDefaultStore(in: home) { _ in
                    let todos = TodosModel()
                    todos.list = [TodoModel(content: "one"), TodoModel(content: "two")]
                    todos.list[1].completed = true
                    todos.saveLocally(key: "todos")
                    let loaded = TodosModel()
                    loaded.list = TodosModel.loadLocally(key: "todos") ?? []
                    #expect(loaded.list.map(\.content) == ["one", "two"])
                    #expect(loaded.filter(completedFilter: true).map(\.content) == ["two"])
                    #expect(loaded.filter(completedFilter: false).map(\.content) == ["one"])
                    #expect(loaded.filter(completedFilter: nil).count == 2)
                    TodosModel.deleteLocally(key: "todos")
                    #expect(TodosModel.loadLocally(key: "todos") == nil)
                }
            }
        }
    }
}
