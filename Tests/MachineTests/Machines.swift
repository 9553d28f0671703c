import Foundation
import Testing

/// Machines synced by Syncthing: writes from every side, partitions,
/// machines away through a compaction, `kvfs mount --syncthing`, and (in the
/// extensions beside this file) quota, status and retiring a device.
///
/// Each machine is its own network, mount, UTS and PID namespace with its own
/// Syncthing, sync directory, state directory and kvfs mount (see ``Cluster``).
/// The suite runs one cluster at a time: a test starts two or three
/// Syncthing instances, and CI machines have two cores.
@Suite("Machines, each in its own namespaces with Syncthing and a kvfs mount", .serialized, .enabled(if: Cluster.available))
struct Machines {
    @Test(.timeLimit(.minutes(3)))
    func concurrentWritesFromBothMachinesAgreeWithoutConflictCopies() throws {
        try withCluster(machines: 2) { cluster in
            let writes = """
                i=1
                while [ $i -le 60 ]; do
                    echo "$ME $i" > "$M/$ME-$i"
                    echo "$ME $i" > "$M/shared-$((i % 4))"
                    [ $((i % 10)) -eq 0 ] && rm "$M/$ME-$((i - 5))"
                    i=$((i + 1))
                done
                """
            try concurrently(cluster.machines.map { machine in { try machine.ok(writes) } })
            let listing = try cluster.waitForAgreement()
            // 60 own keys less 6 removed on each machine, and the 4 shared ones.
            #expect(listing.split(separator: "\n").count == 2 * 54 + 4)
            #expect(cluster.conflictCopies().isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func partitionWithWritesAndRemovalsOnBothSidesHeals() throws {
        try withCluster(machines: 2) { cluster in
            let (m1, m2) = (cluster.machines[0], cluster.machines[1])
            try m1.ok("for i in 1 2 3 4 5 6; do echo seed > \"$M/k$i\"; done")
            try cluster.waitForAgreement()
            try cluster.partition(m2)
            let indexed = (try m1.indexSequence(), try m2.indexSequence())
            try m1.ok("for i in 1 2 3; do echo one > \"$M/a$i\"; done; rm \"$M/k1\" \"$M/k2\"; echo one > \"$M/k5\"")
            try m2.ok("for i in 1 2 3; do echo two > \"$M/b$i\"; done; rm \"$M/k2\" \"$M/k3\"; sleep 0.1; echo two > \"$M/k5\"")
            // The partition is real: once each side's Syncthing has indexed its writes (which it
            // announces at once to a peer it reaches), nothing has crossed.
            try waitUntil(seconds: 30, "each side to index its writes", every: 0.05) {
                try m1.indexSequence() > indexed.0 && m2.indexSequence() > indexed.1
            }
            #expect(try m1.run("[ -e \"$M/b1\" ]").status != 0)
            #expect(try m2.run("[ -e \"$M/a1\" ]").status != 0)
            try cluster.heal(m2)
            try cluster.waitForAgreement(seconds: 90)
            #expect(try m1.ok("cd \"$M\" && ls | tr '\\n' ' '") == "a1 a2 a3 b1 b2 b3 k4 k5 k6 ")
            #expect(try m1.ok("cat \"$M/k5\"") == "two\n")  // the later write wins on both sides
            #expect(cluster.conflictCopies().isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(4)))
    func aMachineAwayThroughACompactionBringsNothingBack() throws {
        try withCluster(machines: 3) { cluster in
            let (m1, m2, m3) = (cluster.machines[0], cluster.machines[1], cluster.machines[2])
            try m3.ok("for i in 1 2 3 4 5 6; do echo three > \"$M/e$i\"; done")
            try m1.ok("for i in 1 2 3 4; do echo one > \"$M/d$i\"; done")
            try cluster.waitForAgreement()
            // m3 goes away (unmounted, Syncthing stopped), as a laptop closed for the weekend.
            m3.unmount()
            try m3.stopSyncthing()
            try m1.ok("rm \"$M/e1\" \"$M/e2\" \"$M/d1\"")
            try m2.ok("rm \"$M/e3\" \"$M/d2\"")
            // 1.2 MB of journal: m1 compacts its folder into a snapshot.
            let id1 = try m1.deviceID()
            try m1.ok(Self.writeUntilCompacted(id1))
            try cluster.waitForAgreement([m1, m2])
            try m3.startSyncthing()
            try m3.mount()
            let listing = try cluster.waitForAgreement(seconds: 90)
            let keys = listing.split(separator: "\n").map { String($0.split(separator: "/").last ?? "") }
            #expect(keys == ["d3", "d4", "e4", "e5", "e6"])
            // And once more after everyone has everything (every Syncthing has every file of every other,
            // and a later write of m3 has reached every mount, which has read the sync directory since):
            // still nothing back.
            try waitUntil(seconds: 60, "every Syncthing to have every file", every: 0.05) {
                try cluster.machines.allSatisfy { machine in
                    try cluster.machines.filter { $0 !== machine }.allSatisfy { try machine.completion(of: $0) == 100 }
                }
            }
            try m3.ok("echo later > \"$M/sentinel\"")
            let later = try cluster.waitForAgreement().split(separator: "\n").filter { !$0.hasSuffix("/sentinel") }
            #expect(later == listing.split(separator: "\n"))
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func aCommitLeavesTheMachineAtOnceAndSyncthingStoppingNeverBlocksAWrite() throws {
        // Syncthing's watcher waits 10 s and rescans hourly: only kvfs's scan requests explain a fast arrival.
        try withCluster(machines: 2, rescanInterval: 3600, watcherDelay: 10) { cluster in
            let (m1, m2) = (cluster.machines[0], cluster.machines[1])
            for round in 1...5 {
                try m1.ok("echo \(round) > \"$M/fast\"")
                try arrives("\(round)\n", at: m2, key: "fast", within: 3)
            }
            try m1.stopSyncthing()
            // Writes go on without Syncthing, each as fast as ever.
            let took = try m1.ok("""
                start=$(date +%s%N)
                for i in 1 2 3 4 5 6 7 8 9 10; do echo "down $i" > "$M/fast"; done
                echo $(( ($(date +%s%N) - start) / 1000000 ))
                """)
            #expect((Int(took.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max) < 2000, "10 writes took \(took) ms")
            #expect(try m1.ok("grep -c 'does not answer' \"$STATE/daemon.log\"") == "1\n")
            try m1.startSyncthing()
            try waitUntil(seconds: 60, "m1 and m2 connected again", every: 0.05) { m1.connectedPeers() == 1 }
            try m1.ok("echo back > \"$M/fast\"")
            try arrives("back\n", at: m2, key: "fast", within: 5)
            #expect(try m1.ok("grep -c 'answers again' \"$STATE/daemon.log\"") == "1\n")
        }
    }

    /// Waits until `key` reads `value` on `machine`, failing after `seconds`.
    private func arrives(_ value: String, at machine: Machine, key: String, within seconds: TimeInterval,
                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try machine.run("""
            end=$(( $(date +%s%N) + \(Int(seconds * 1000)) * 1000000 ))
            while [ "$(cat "$M/\(key)" 2>/dev/null)" != "\(value.dropLast())" ]; do
                [ $(date +%s%N) -lt $end ] || { echo "$(cat "$M/\(key)" 2>&1)"; exit 1; }
                sleep 0.01
            done
            """)
        #expect(result.status == 0, "\(key) did not become \(value.debugDescription) on \(machine.name) within \(seconds) s: \(result)",
                sourceLocation: sourceLocation)
    }
}

/// Runs `bodies` at the same time, one thread each; rethrows the first error.
func concurrently(_ bodies: [@Sendable () throws -> Void]) throws {
    let errors = LockedErrors()
    DispatchQueue.concurrentPerform(iterations: bodies.count) { index in
        do { try bodies[index]() } catch { errors.append(error) }
    }
    if let error = errors.first { throw error }
}

/// Errors collected from several threads.
private final class LockedErrors: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func append(_ error: Error) { lock.withLock { errors.append(error) } }
    var first: Error? { lock.withLock { errors.first } }
}

extension Machines {
    /// A shell script that writes 1.2 MB of journal (twelve 100 KB values to one key, then removes it) on a
    /// machine whose device is `device`, and waits until its folder holds a snapshot: the compaction runs
    /// after the write that made it due (off the write path), so its snapshot comes within moments.
    static func writeUntilCompacted(_ device: String) -> String {
        """
        i=0
        while [ $i -lt 12 ]; do head -c 75000 /dev/urandom | base64 -w 0 > "$M/big"; i=$((i + 1)); done
        rm "$M/big"
        i=0; until ls "$SYNC/devices/\(device)" | grep -q '^snapshot-'; do
            i=$((i + 1)); [ $i -lt 200 ] || { echo "\(device) did not compact"; ls -l "$SYNC/devices/\(device)"; exit 1; }; sleep 0.05
        done
        """
    }
}
