import Foundation
@testable import KVStore
import Testing

/// Issue 16 item 5: a device is a machine, not a process. The programs of one
/// store (copies of kvfs-store-probe, Tests/Programs/StoreProbe, each a
/// process of its own) and its mount on one machine are one device: one id,
/// one journal, and each sees the others' writes at once, as ServerChange.
@Suite("A device is a machine", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct OneDeviceTests {
    /// The probe built beside the tests, or `$KVFS_STORE_PROBE`'s (with `KVFS_BINARY`, to check these tests against another build).
    static let probe = ProcessInfo.processInfo.environment["KVFS_STORE_PROBE"] ?? AppStoreTests.probe

    /// The default store's folders in a sandbox, as the programs and `kvfs mount` (with no options) find them.
    static let defaultStore = (sync: "home/data/kvfs/default", state: "home/state/kvfs/default")

    @Test("two programs of one store share values and get each other's changes as ServerChange; with a mount, the machine is one device")
    func twoProgramsAndAMount() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                P=\#(Self.probe); export KVFS_STORE=com.example.notes
                kvfs mount $M --store com.example.notes
                $P set a one wait-for b 30 get b set c three watch 2 > one.out &
                for i in $(seq 200); do [ "$(cat $M/a 2>/dev/null)" = one ] && break; sleep 0.05; done
                $P get a set b two wait-for c 30 get c > two.out
                wait
                echo -- one; sort one.out; echo -- two; sort two.out
                echo -- mount; cat $M/a $M/b $M/c
                jq -r 'select(.reason == "ServerChange") | .keys[]' $M/.kvfs/changes.log | sort -u | tr '\n' ' '; echo
                echo -- devices; kvfs devices --store com.example.notes | tail -n +2 | wc -l
                kvfs devices --store com.example.notes --json | jq -r '.[0].state'
                ls home/state/kvfs
                """#, timeout: 120)
            let state = DeviceStore.defaultStateDirectory(for: URL(fileURLWithPath: sandbox.path + "/home/data/kvfs/com.example.notes"))
            #expect(output == """
                -- one
                notified 0 b
                two
                -- two
                notified 0 c
                one
                three
                -- mount
                one
                two
                three
                a b c 
                -- devices
                1
                this
                \(state.lastPathComponent)

                """)
        }
    }

    @Test("a mount and a program of one store: the program's write shows in the mount at once and in .kvfs/changes.log; the mount's reaches the program as ServerChange")
    func aMountAndAProgram() throws {
        try withSandbox { sandbox in
            // No polling to speak of: only inotify on the device's own folder can bring the program's write at once.
            let output = try sandbox.ok(#"""
                P=\#(Self.probe); export KVFS_STORE=default
                kvfs mount $M --poll-interval 3600
                $P set from-program 1 wait-for from-mount 30 get from-mount > program.out &
                for i in $(seq 100); do [ -e $M/from-program ] && break; sleep 0.02; done
                cat $M/from-program
                echo hello > $M/from-mount
                wait
                sort program.out
                jq -r 'select(.reason == "ServerChange") | .keys[]' $M/.kvfs/changes.log
                kvfs devices | tail -n +2 | wc -l
                """#, timeout: 60)
            #expect(output == "1\nhello\nnotified 0 from-mount\nfrom-program\n1\n")
        }
    }

    @Test("two programs appending at once: no write lost, the journal's stamps strictly increasing, every value on another device",
          .plainOnly("it reads the journal's records, which a sealed store encrypts"))
    func concurrentAppends() throws {
        try withSandbox { sandbox in
            let journal = try Self.twoBursts(in: sandbox, writes: 2000, padding: 0)
            #expect(journal.snapshots == 0, "no compaction was expected: the test counts every record")
            for prefix in ["a", "b"] {
                let values = journal.records.compactMap { record -> Int? in
                    guard case let .put(key, .string(value)) = record.operation, key.string.hasPrefix(prefix) else { return nil }
                    return Int(value)
                }
                #expect(values.sorted() == Array(1...2000), "\(prefix): \(values.count) writes in the journal")
            }
            try Self.expectFinalValues(in: sandbox, writes: 2000, padding: 0)
        }
    }

    @Test("compaction by one process while another appends loses nothing",
          .plainOnly("it reads the journal's records, which a sealed store encrypts"))
    func compactionDuringConcurrentAppends() throws {
        try withSandbox { sandbox in
            // 2 × 1500 writes of about 1 kB: the segment passes 1 MiB, twice the snapshot, more than once.
            let journal = try Self.twoBursts(in: sandbox, writes: 1500, padding: 1000)
            #expect(journal.snapshots > 1, "no compaction ran")
            try Self.expectFinalValues(in: sandbox, writes: 1500, padding: 1000)
        }
    }

    @Test("a torn tail a killed process left in the journal is cut by the next process that appends, while others run",
          .plainOnly("it reads the journal's records and appends a torn plain frame; a sealed journal's records are encrypted"))
    func aTornTailIsCutByTheNextAppender() throws {
        try withSandbox { sandbox in
            let sync = sandbox.path + "/" + Self.defaultStore.sync
            try sandbox.ok(#"""
                P=\#(Self.probe); export KVFS_STORE=default
                $P set k one watch 4 > /dev/null &
                for i in $(seq 200); do [ "$(kvfs get k 2>/dev/null)" = one ] && break; sleep 0.05; done
                # The first bytes of a frame, as a process killed in the middle of its append leaves them.
                python3 -c 'import glob, sys; open(glob.glob(sys.argv[1])[0], "ab").write(bytes([100, 0, 0, 0, 1, 2, 3, 4]) + b"torn")' \
                    "\#(sync)/devices/*/journal-0000000000000001.log"
                $P set k two
                wait
                """#, timeout: 60)
            let journal = try Self.journal(in: sandbox)
            #expect(journal.problems.isEmpty, "\(journal.problems)")
            #expect(journal.records.map(\.operation) == [.put(key: "k", value: .string("one")), .put(key: "k", value: .string("two"))])
            #expect(journal.segmentBytes == journal.records.map { RecordFrame.encode($0).count }.reduce(0, +), "the torn bytes stayed")
            #expect(try sandbox.ok("kvfs get k --sync-dir $T/\(Self.defaultStore.sync) --state-dir $T/other") == "two\n")
        }
    }

    @Test("kill -9 of a process in the middle of its appends: the others go on, and the journal stays readable",
          .plainOnly("it reads the journal's records, which a sealed store encrypts"))
    func killedMidAppend() throws {
        try withSandbox { sandbox in
            try sandbox.ok(#"""
                P=\#(Self.probe); export KVFS_STORE=default
                $P burst 1000000 a 100 > /dev/null 2>&1 & A=$!
                $P watch 1 burst 200 b 0 > /dev/null & B=$!
                sleep 0.5; kill -9 $A; wait $B
                $P set after yes
                """#, timeout: 120)
            let journal = try Self.journal(in: sandbox)
            #expect(journal.problems.isEmpty, "\(journal.problems)")
            Self.expectStrictlyIncreasing(journal.records)
            #expect(journal.records.last?.operation == .put(key: "after", value: .string("yes")))
            #expect(try sandbox.ok("kvfs get b0 --sync-dir $T/\(Self.defaultStore.sync) --state-dir $T/other") == "200\n")
        }
    }

    @Test("earlier versions' devices of each program (swift-PROGRAM) keep their values; the program writes as the machine's device; kvfs retire removes them")
    func earlierProgramDevicesRetire() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                P=\#(Self.probe); export KVFS_STORE=default
                OLD=home/state/kvfs/swift-kvfs-store-probe
                kvfs set old-key kept --sync-dir $T/\#(Self.defaultStore.sync) --state-dir $OLD
                old=$(cat $OLD/device-id)
                before=$(cat \#(Self.defaultStore.sync)/devices/$old/journal-*.log | md5sum)
                $P get old-key set new-key written | grep -v '^notified'
                [ "$(cat \#(Self.defaultStore.sync)/devices/$old/journal-*.log | md5sum)" = "$before" ] && echo "old device untouched"
                kvfs devices | tail -n +2 | wc -l
                kvfs retire $old | sed "s/$old/OLD/; s|kept in .*;|kept in ...;|"
                ls \#(Self.defaultStore.sync)/devices | wc -l
                kvfs get old-key; kvfs get new-key
                """#, timeout: 60)
            #expect(output == """
                kept
                old device untouched
                2
                retired \(sandbox.firstDeviceName) (OLD): its 1 value and 0 removals that still count are kept in ...; its folder is removed
                1
                kept
                written

                """)
        }
    }

    // MARK: The journal, as the tests read it

    /// The machine's device of the default store, as its folder holds it now.
    struct Journal {
        /// Its records in file order: the newest snapshot's, then its segments'.
        var records: [JournalRecord]
        /// What keeps a reader from reading all of it.
        var problems: [SyncWarning]
        /// The generation of the newest snapshot (0: none, no compaction ran).
        var snapshots: UInt64
        /// The bytes of its last segment.
        var segmentBytes: Int
    }

    static func journal(in sandbox: Sandbox) throws -> Journal {
        let hex = try String(contentsOfFile: sandbox.path + "/" + defaultStore.state + "/device-id", encoding: .utf8)
        let device = try #require(DeviceID(hex: hex.trimmingCharacters(in: .whitespacesAndNewlines)))
        let folder = DeviceFolder(path: sandbox.path + "/" + defaultStore.sync + "/devices/" + device.hex, isWritable: false)
        let reader = DeviceFolderReader(device: device, folder: folder, ownFolder: true, warn: { _ in })
        let records = reader.readNew().records
        let segment = try #require(folder.listing().segments.last)
        let bytes = try #require(try Files.read(folder.segmentPath(segment))).count
        return Journal(records: records, problems: reader.problems, snapshots: reader.snapshotGeneration ?? 0, segmentBytes: bytes)
    }

    /// Runs two programs at once, each setting `writes` values (`a…`, `b…`, `padding` dots
    /// long) as fast as it can, and returns the journal, checked readable and in stamp order.
    static func twoBursts(in sandbox: Sandbox, writes: Int, padding: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> Journal {
        try sandbox.ok(#"""
            P=\#(probe); export KVFS_STORE=default
            $P burst \#(writes) a \#(padding) > /dev/null & $P burst \#(writes) b \#(padding) > /dev/null; wait
            """#, timeout: 300)
        let journal = try journal(in: sandbox)
        #expect(journal.problems.isEmpty, "\(journal.problems)", sourceLocation: sourceLocation)
        expectStrictlyIncreasing(journal.records, sourceLocation: sourceLocation)
        return journal
    }

    /// Each record stamped after the one before it, across the processes that wrote them.
    static func expectStrictlyIncreasing(_ records: [JournalRecord], sourceLocation: SourceLocation = #_sourceLocation) {
        let out = zip(records, records.dropFirst()).filter { $0.stamp.time >= $1.stamp.time }
        #expect(out.isEmpty, "\(out.count) records not after the one before them, first: \(out.first.map { "\($0)" } ?? "")",
                sourceLocation: sourceLocation)
    }

    /// What another device reads once the two bursts (`a`, `b`) of `writes` writes are done: each key's last write.
    static func expectFinalValues(in sandbox: Sandbox, writes: Int, padding: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let other = try DeviceStore(syncDirectory: URL(fileURLWithPath: sandbox.path + "/" + defaultStore.sync),
                                    stateDirectory: URL(fileURLWithPath: sandbox.path + "/other"), readOnly: true, warn: { _ in })
        defer { other.close() }
        var expected: [StoreKey: PropertyListValue] = [:]
        for prefix in ["a", "b"] {
            for write in 1...writes { expected["\(prefix)\(write % 50)"] = .string("\(write)" + String(repeating: ".", count: padding)) }
        }
        let values = other.values
        #expect(values.count == expected.count && values == expected,
                "\(expected.filter { values[$0.key] != $0.value }.count) keys differ", sourceLocation: sourceLocation)
    }
}
