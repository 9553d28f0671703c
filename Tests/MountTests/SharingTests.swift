import Foundation
import KVStore
import Testing

/// docs/machines.md and docs/swift.md: one sync directory shared by
/// a mount and a Swift `UbiquitousKeyValueStore`, and by two mounts.
@Suite("A sync directory shared across mounts and the library", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct SharingTests {
    /// The notifications one store posted, collected from any thread.
    final class Notifications: @unchecked Sendable {
        private let lock = NSLock()
        private var received: [(reason: Int, keys: [String])] = []
        private var token: NSObjectProtocol?

        init(from store: UbiquitousKeyValueStore) {
            token = NotificationCenter.default.addObserver(
                forName: UbiquitousKeyValueStore.didChangeExternallyNotification, object: nil, queue: nil
            ) { [weak self, weak store] notification in
                guard let self, let store, notification.object as AnyObject? === store else { return }
                let reason = (notification.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? NSNumber)?.intValue ?? -1
                let keys = notification.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
                self.lock.withLock { self.received.append((reason, keys)) }
            }
        }

        deinit { token.map(NotificationCenter.default.removeObserver) }

        var all: [(reason: Int, keys: [String])] { lock.withLock { received } }

        /// Waits up to `seconds` for a notification with `reason` naming `key`.
        func wait(reason: Int, key: String, seconds: Double = 10) -> Bool {
            TestSupport.poll(seconds: seconds, every: 0.05) { all.contains { $0.reason == reason && $0.keys.contains(key) } }
        }
    }

    /// Runs `script` until it prints `want` (up to `seconds`); returns what it printed last.
    static func poll(_ sandbox: Sandbox, _ script: String, until want: String, seconds: Double = 10) throws -> String {
        var output = ""
        try TestSupport.poll(seconds: seconds, every: 0.1) {
            output = try sandbox.run(script).output
            return output == want
        }
        return output
    }

    @Test("a shell write through a mount reaches a Swift store as ServerChange; the store's writes appear typed in the mount")
    func libraryAndMount() throws {
        try withMount { sandbox in
            let store = try UbiquitousKeyValueStore(syncDirectory: URL(fileURLWithPath: sandbox.syncDirectory),
                                                    stateDirectory: URL(fileURLWithPath: sandbox.path + "/swift-state"),
                                                    deviceName: "swift")
            let notifications = Notifications(from: store)
            #expect(store.synchronize())

            // Mount → library.
            try sandbox.ok("echo hello > $M/greeting")
            #expect(notifications.wait(reason: NSUbiquitousKeyValueStoreServerChange, key: "greeting"),
                    "no ServerChange for 'greeting' within 10 s; got \(notifications.all)")
            #expect(NSUbiquitousKeyValueStoreServerChange == 0)
            #expect(store.string(forKey: "greeting") == "hello")
            try sandbox.ok("kvfs set volume 11 --type integer $S")
            #expect(notifications.wait(reason: 0, key: "volume"))
            #expect(store.longLong(forKey: "volume") == 11)
            #expect(store.object(forKey: "volume") as? Int64 == 11 || (store.object(forKey: "volume") as? NSNumber)?.int64Value == 11)

            // Library → mount, typed.
            store.set(Int64(42), forKey: "answer")
            store.set(true, forKey: "enabled")
            store.set(["a": Int64(1)] as [String: Any], forKey: "settings")
            store.set("from swift", forKey: "note")
            #expect(store.synchronize())
            let shown = try Self.poll(sandbox, #"""
                for k in answer enabled settings note; do printf '%s %s %s\n' $k "$(xtype $M/$k 2>&1)" "$(size $M/$k 2>&1)"; done
                """#, until: "answer integer 3\nenabled bool 5\nsettings dictionary 224\nnote string 11\n")
            #expect(shown == "answer integer 3\nenabled bool 5\nsettings dictionary 224\nnote string 11\n")
            let content = try sandbox.ok("cat $M/answer $M/enabled $M/note; grep -c '<key>a</key>' $M/settings; getfattr --only-values -n user.kvfs.device $M/answer | cut -d' ' -f1")
            #expect(content == "42\ntrue\nfrom swift\n1\nswift\n")

            // A removal by the library vanishes from the mount's listing.
            store.removeObject(forKey: "greeting")
            #expect(try Self.poll(sandbox, "ls $M | tr '\\n' ' '", until: "answer enabled note settings volume ")
                    == "answer enabled note settings volume ")
            #expect(try sandbox.run("cat $M/greeting").status != 0)

            // The mount logs the library's writes (another device) as ServerChange; the library's own were not posted to it.
            let log = try sandbox.ok("jq -r 'select(.reason == \"ServerChange\") | .keys[]' $M/.kvfs/changes.log | sort -u | tr '\\n' ' '")
            #expect(log == "answer enabled greeting note settings ")
            #expect(!notifications.all.contains { $0.keys.contains("answer") })
        }
    }

    @Test("two mounts (two devices) on one sync dir: a write on one shows on the other at once, a delete vanishes")
    func twoMounts() throws {
        try withSandbox { sandbox in
            try sandbox.mount("m", state: "state")
            try sandbox.mount("m2", state: "state2")
            // The second mount caches the old state first: its listing, the file's size and its pages.
            let before = try sandbox.ok(#"""
                echo short > $M/k
                for i in $(seq 1 50); do [ "$(cat $T/m2/k 2>/dev/null)" = short ] && break; sleep 0.1; done
                cat $T/m2/k; size $T/m2/k; ls $T/m2 | tr '\n' ' '; echo
                """#)
            #expect(before == "short\n6\nk \n")
            try sandbox.ok("echo 'a much longer value' > $M/k; echo other > $M/other")
            let seen = try Self.poll(sandbox, "cat $T/m2/k; size $T/m2/k; ls $T/m2 | tr '\\n' ' '; echo",
                                     until: "a much longer value\n20\nk other \n", seconds: 5)
            #expect(seen == "a much longer value\n20\nk other \n", "the second mount shows a stale state")
            // docs/files.md § File semantics: mtime is when the value was written, the same on every device; so are the
            // xattrs that say when (with the clock) and by whom.
            let written = try sandbox.ok(#"""
                for m in $M $T/m2; do
                    stat -c %.9Y $m/k; getfattr --only-values -n user.kvfs.modified $m/k; echo
                    getfattr --only-values -n user.kvfs.device $m/k; echo
                done
                """#).split(separator: "\n")
            #expect(written.count == 6 && written[0..<3] == written[3..<6], "\(written)")
            // …and the same the other way round, including a delete.
            try sandbox.ok("rm $T/m2/k; echo back > $T/m2/other")
            let deleted = try Self.poll(sandbox, "ls $M | tr '\\n' ' '; cat $M/other; cat $M/k 2>&1 | sed 's/.*: //'",
                                        until: "other back\nNo such file or directory\n", seconds: 5)
            #expect(deleted == "other back\nNo such file or directory\n")
            let logs = try sandbox.ok(#"""
                jq -c '[.reason, .code, .keys]' $T/m2/.kvfs/changes.log | sort -u
                echo --
                jq -c '[.reason, .code, .keys]' $M/.kvfs/changes.log | sort -u
                """#)
            #expect(logs.contains("[\"ServerChange\",0,[\"k\"]]") || logs.contains("[\"ServerChange\",0,[\"k\",\"other\"]]"), "\(logs)")
            #expect(!logs.contains("QuotaViolationChange"), "\(logs)")
        }
    }

    @Test("tail -f on .kvfs/changes.log follows the lines that other devices' writes add")
    func tailFollowsTheChangeLog() throws {
        try withSandbox { sandbox in
            try sandbox.mount("m", state: "state")
            try sandbox.mount("m2", state: "state2")
            let followed = try sandbox.ok(#"""
                timeout 6 tail -n 0 -f $M/.kvfs/changes.log > $T/tail.out &
                sleep 1
                echo one > $T/m2/first
                sleep 2
                echo two > $T/m2/second
                wait
                jq -c '[.reason, .keys]' $T/tail.out
                """#, timeout: 30)
            #expect(followed == "[\"ServerChange\",[\"first\"]]\n[\"ServerChange\",[\"second\"]]\n")
        }
    }

    @Test("a mount that was away gets the keys changed meanwhile as InitialSyncChange")
    func initialSync() throws {
        try withSandbox { sandbox in
            try sandbox.mount("m", state: "state")
            try sandbox.mount("m2", state: "state2")
            try sandbox.ok(#"""
                kvfs unmount $T/m2
                echo while-away > $M/missed
                kvfs mount $T/m2 --sync-dir $SYNC --state-dir $T/state2
                """#)
            let output = try sandbox.ok(#"""
                cat $T/m2/missed
                jq -c 'select(.reason == "InitialSyncChange") | [.code, .keys]' $T/m2/.kvfs/changes.log
                kvfs changes --sync-dir $SYNC --state-dir $T/state2 | jq -c 'select(.reason == "InitialSyncChange") | .keys'
                """#)
            #expect(output == "while-away\n[1,[\"missed\"]]\n[\"missed\"]\n")
        }
    }
}
