import Foundation
import Synchronization
import Testing
@testable import KVStore

/// The two stores every scenario runs against.
enum StoreKind: String, CaseIterable, Sendable, Codable, CustomTestStringConvertible {
    case inMemory, syncDirectory
    var testDescription: String { rawValue }
}

/// Runs `body` with a fresh store of `kind`, then closes the store and removes its folder.
func withStore<Result>(_ kind: StoreKind, _ body: (StoreFixture, any KeyValueStore) async throws -> Result) async throws -> Result {
    let fixture = try StoreFixture(kind)
    defer { fixture.close() }
    return try await body(fixture, fixture.store)
}

/// A fresh store of one kind, with a way for "another device" to change it.
/// A sync-directory store lives in a temporary folder, removed by ``close()``.
final class StoreFixture: @unchecked Sendable {
    let kind: StoreKind
    private let temporary = TemporaryFolder("kvfs-library")
    var folder: URL { temporary.url }
    private(set) var store: (any KeyValueStore)!
    private var otherDevice: UbiquitousKeyValueStore?

    init(_ kind: StoreKind) throws {
        self.kind = kind
        switch kind {
        case .inMemory: store = InMemoryKeyValueStore()
        case .syncDirectory: store = try openDevice("this")
        }
    }

    /// Drops the stores (closing them, once nobody else holds them) and removes the folder.
    func close() {
        store = nil
        otherDevice = nil
        temporary.cleanup()
    }

    var syncDirectory: URL { folder.appendingPathComponent("sync") }

    /// Another device of the same sync directory, with its own state directory.
    func openDevice(_ name: String) throws -> UbiquitousKeyValueStore {
        try UbiquitousKeyValueStore(syncDirectory: syncDirectory, stateDirectory: folder.appendingPathComponent("state-\(name)"),
                                    deviceName: name)
    }

    /// Another device changes keys (nil removes); for a sync directory the change
    /// is then picked up by `synchronize()` (or the watcher, whichever is first).
    func changeExternally(_ changes: [StoreKey: PropertyListValue?]) throws {
        switch kind {
        case .inMemory:
            (store as! InMemoryKeyValueStore).simulateExternalChange(changes)
        case .syncDirectory:
            let other = try otherDevice ?? openDevice("other")
            otherDevice = other
            for (key, value) in changes {
                if let value { try other.setValue(value, forKey: key.string) } else { try other.removeValue(forKey: key.string) }
            }
            #expect(store.synchronize())
        }
    }
}

extension StoreFixture {
    /// Makes one more external change ("sentinel") and waits until `recorder`
    /// heard of it: whatever the store would have posted before it has been
    /// posted by then, so a test can check that something was not.
    func settle(_ recorder: NotificationRecorder, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try changeExternally(["sentinel": .bool(true)])
        let arrived = await recorder.waitFor(["sentinel"], reason: NSUbiquitousKeyValueStoreServerChange)
        #expect(arrived, "the sentinel change was not posted", sourceLocation: sourceLocation)
    }
}

/// A new temporary folder, for an exit test's child to keep its default
/// store in. The parent removes it once the child has exited: the child
/// cannot, as `.default` stays open (and would write its folders again)
/// until the child ends.
func temporaryHome() -> String { TemporaryFolder("kvfs-library-default").path }

/// Runs `body` with `$XDG_DATA_HOME` and `$XDG_STATE_HOME` in `home`, and
/// `KVFS_STORE=default`, so that `.default` opens the store `default` of its
/// own there. Only in an exit test's child process: the environment is the
/// whole process's, and `.default` opens once.
func withDefaultStore(in home: String, _ body: (URL) async throws -> Void) async rethrows {
    let home = URL(fileURLWithPath: home)
    setenv("XDG_DATA_HOME", home.appendingPathComponent("data").path, 1)
    setenv("XDG_STATE_HOME", home.appendingPathComponent("state").path, 1)
    setenv("KVFS_STORE", "default", 1)
    try await body(home)
}

/// Records a store's didChangeExternallyNotification posts.
final class NotificationRecorder: @unchecked Sendable {
    struct Post {
        var reason: Int?
        var reasonNumber: NSNumber?
        var keys: [String]?
        var objectIsStore: Bool
        /// The thread the notification was posted on.
        var thread: pthread_t
    }

    private let posts = Mutex<[Post]>([])
    private var token: (any NSObjectProtocol)?

    init(_ store: any KeyValueStore) {
        token = NotificationCenter.default.addObserver(forName: UbiquitousKeyValueStore.didChangeExternallyNotification,
                                                       object: store, queue: nil) { [weak self] notification in
            let post = Post(reason: notification.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int,
                            reasonNumber: notification.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? NSNumber,
                            keys: notification.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String],
                            objectIsStore: (notification.object as AnyObject?) === store, thread: pthread_self())
            self?.posts.withLock { $0.append(post) }
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }

    var all: [Post] { posts.withLock { $0 } }

    /// Every key posted with `reason`, by its exact scalars.
    func keys(reason: Int) -> Set<StoreKey> {
        Set(all.filter { $0.reason == reason }.flatMap { $0.keys ?? [] }.map(StoreKey.init(_:)))
    }

    /// Waits until posts with `reason` have named all of `keys`.
    func waitFor(_ keys: Set<StoreKey>, reason: Int) async -> Bool {
        await poll(seconds: 10) { keys.isSubset(of: self.keys(reason: reason)) }
    }
}

/// Collects a change stream's elements until their keys cover `keys` (or `seconds` pass).
func collect(_ stream: AsyncStream<StoreChange>, covering keys: Set<StoreKey>, seconds: Double = 10) async -> [StoreChange] {
    await withTaskGroup(of: [StoreChange]?.self) { group in
        group.addTask {
            var changes: [StoreChange] = []
            for await change in stream {
                changes.append(change)
                if keys.isSubset(of: Set(changes.flatMap(\.keys))) { break }
            }
            return changes
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first ?? []
    }
}

/// Groups the library's suites, so `swift test --filter KVStoreTests.Library` runs them all.
@Suite("Library") enum LibraryTests {}
