import Foundation
import Testing
@testable import KVStore

/// Noticing changes: inotify at once where it works, polling where it does not.
@Suite("Watching the sync directory")
struct WatcherTests {
    let fixture = SyncFixture()

    // The bounds below (10 s) are generous for a loaded machine: with polling
    // once an hour, any arrival at all proves that inotify reported the change.

    @Test func inotifyNoticesAtOnceWithoutPolling() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        let watcher = SyncWatcher(store: b, pollInterval: 3600)
        defer { watcher.stop(); a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        #expect(poll(seconds: 10, every: 0.002) { b.value(forKey: "k") == .integer(1) })
    }

    @Test func aDeviceFolderAppearingLaterIsWatchedToo() throws {
        let b = try fixture.open("b")
        let watcher = SyncWatcher(store: b, pollInterval: 3600)
        defer { watcher.stop(); b.close(); fixture.cleanup() }
        let late = try fixture.open("late")
        defer { late.close() }
        try late.set(.integer(1), forKey: "k")
        #expect(poll(seconds: 10, every: 0.002) { b.value(forKey: "k") == .integer(1) })
        try late.set(.integer(2), forKey: "k")  // an append inside the new folder: only its own watch reports it
        #expect(poll(seconds: 10, every: 0.002) { b.value(forKey: "k") == .integer(2) })
    }

    @Test func pollingAloneNoticesToo() throws {
        let a = try fixture.open("a"), b = try fixture.open("b")
        let watcher = SyncWatcher(store: b, pollInterval: 0.05, polling: true)
        defer { watcher.stop(); a.close(); b.close(); fixture.cleanup() }
        try a.set(.integer(1), forKey: "k")
        #expect(poll(seconds: 10, every: 0.002) { b.value(forKey: "k") == .integer(1) })
    }

    @Test func aStoppedWatcherRefreshesNoMore() throws {
        let a = try fixture.open("a"), b = try fixture.open("b"), c = try fixture.open("c")
        let running = SyncWatcher(store: c, pollInterval: 0.01)
        defer { running.stop(); a.close(); b.close(); c.close(); fixture.cleanup() }
        SyncWatcher(store: b, pollInterval: 0.01).stop()
        try a.set(.integer(1), forKey: "k")
        // A watcher like b's that still runs has noticed the write by now.
        #expect(poll(seconds: 10, every: 0.002) { c.value(forKey: "k") == .integer(1) })
        #expect(b.value(forKey: "k") == nil)
    }
}
