import Foundation
import KVStore
import Testing

/// docs/sync.md § Quota under concurrency, through a real mount:
/// while the quota rule sets a key aside, writes that fit still work, and
/// every change of what is visible reaches the kernel's caches.
@Suite("Set-aside keys on a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct SetAsideTests {
    /// Mounts the sandbox's store, and makes another device write "second"
    /// (600 kB) while the mount writes "first" (600 kB), neither having seen
    /// the other's: the mount ends with "second" set aside. Runs `body` with
    /// the other device still open.
    private func withSetAsideKey(_ body: (Sandbox) throws -> Void) throws {
        try withMount { sandbox in
            let other = try DeviceStore(syncDirectory: URL(fileURLWithPath: sandbox.syncDirectory),
                                        stateDirectory: URL(fileURLWithPath: sandbox.path + "/other-state"),
                                        deviceName: "other", warn: { _ in })
            defer { other.close() }
            try sandbox.ok("echo old > $M/small; head -c 600000 /dev/zero > $M/first")
            try other.set(.data(Data(repeating: 2, count: 600_000)), forKey: "second")
            let shown = try SharingTests.poll(sandbox, "jq -c .setAside $M/.kvfs/status", until: "[\"second\"]\n")
            try #require(shown == "[\"second\"]\n", "the mount did not set \"second\" aside")
            try body(sandbox)
        }
    }

    /// Issue 8.2: every overwrite failed with EDQUOT at close().
    @Test("while a key is set aside, overwrites that fit succeed (close() included)")
    func overwritesThatFitSucceed() throws {
        try withSetAsideKey { sandbox in
            let output = try sandbox.ok(#"""
                head -c 600000 /dev/urandom > new; cp new $M/first && cmp new $M/first && echo same
                pywrite $M/small new; cat $M/small; ls $M | tr '\n' ' '; echo; jq -c .setAside $M/.kvfs/status
                """#)
            #expect(output == "same\nok\nnew\nfirst small \n[\"second\"]\n")
        }
    }

    /// Issue 8.3: a removal through this mount let "second" back; `ls` listed
    /// it while `cat` and `stat` said ENOENT from the kernel's cache.
    @Test("a key this mount's own removal lets back shows at once in ls, cat and stat")
    func ownRemovalLetsASetAsideKeyBackAtOnce() throws {
        try withSetAsideKey { sandbox in
            let before = try sandbox.ok(#"""
                cat $M/second 2>&1 | sed 's/.*: //'; stat -c %s $M/second 2>&1 | sed 's/.*: //'
                rm $M/first
                """#)
            #expect(before == "No such file or directory\nNo such file or directory\n")
            // The kernel is told right after rm's reply (not before: it holds the folder's lock until then).
            let after = try SharingTests.poll(sandbox, #"ls $M | tr '\n' ' '; echo; stat -c %s $M/second; wc -c < $M/second"#,
                                              until: "second small \n600000\n600000\n", seconds: 2)
            #expect(after == "second small \n600000\n600000\n")
        }
    }
}
