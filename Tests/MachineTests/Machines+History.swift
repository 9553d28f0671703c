import Foundation
import Testing

/// History is the same on every machine (docs/history.md).
extension Machines {
    /// Every version's name and content checksum under `.kvfs/history/`, one a line: what two machines compare.
    private func history(_ machine: Machine) throws -> String {
        try machine.output("cd \"$M/.kvfs/history\" && find . -type f | LC_ALL=C sort | while read -r f; do echo \"$f $(md5sum < \"$f\" | cut -c1-8)\"; done")
    }

    /// Waits until `machines` list the same history, and returns it.
    @discardableResult
    private func waitForSameHistory(_ machines: [Machine], seconds: TimeInterval = 60) throws -> String {
        var listings: [String] = []
        try waitUntil(seconds: seconds, "\(machines.map(\.name).joined(separator: ", ")) to list the same history", every: 0.2) {
            listings = try machines.map(history)
            return !listings[0].isEmpty && listings.allSatisfy { $0 == listings[0] }
        } failure: {
            zip(machines, listings).map { "--- \($0.name):\n\($1)" }.joined(separator: "\n")
        }
        return listings[0]
    }

    @Test(.enabled(if: KVFSFeature.retire.isBuilt, KVFSFeature.retire.missing), .timeLimit(.minutes(4)))
    func historyIsTheSameOnEveryMachineThroughConcurrentWritesACompactionAndARetirement() throws {
        try withCluster(machines: 3) { cluster in
            let (m1, m2, m3) = (cluster.machines[0], cluster.machines[1], cluster.machines[2])
            try m1.ok("echo one > \"$M/k\"; echo gone > \"$M/gone\"; rm \"$M/gone\"")
            try cluster.waitForAgreement()
            // Concurrent writes: neither has read the other's; both are versions, the loser included.
            try concurrently([m2, m3].map { machine in { try machine.ok("echo \"$ME\" > \"$M/k\"; echo \"$ME\" > \"$M/only-$ME\"") } })
            try cluster.waitForAgreement()
            try m3.ok("rm \"$M/only-$ME\"")
            // 1.2 MB of journal: m1 compacts its folder, keeping the versions history keeps.
            let id1 = try m1.deviceID()
            try m1.ok(Machines.writeUntilCompacted(id1))
            try cluster.waitForAgreement()
            let before = try waitForSameHistory(cluster.machines)
            let lines = before.split(separator: "\n")
            #expect(lines.filter { $0.hasPrefix("./k/") }.count == 3, "one, and m2's and m3's concurrent writes:\n\(before)")
            #expect(lines.contains { $0.hasPrefix("./gone/") && $0.contains(".removed ") })
            #expect(lines.filter { $0.hasPrefix("./big/") }.count == 13, "12 values and the removal")
            // m3 is retired: its versions stay, on every machine left.
            let id3 = try m3.deviceID()
            m3.unmount()
            try waitUntil(seconds: 60, "m1 to see m3 stopped", every: 0.05) { try m1.output("kvfs devices $S | grep ' m3 '").contains("stopped") }
            try m3.stopSyncthing()
            #expect(try m1.ok("kvfs retire m3 $S").isEmpty == false)
            try waitUntil(seconds: 60, "m3's folder gone on m2", every: 0.05) { !FileManager.default.fileExists(atPath: m2.sync + "/devices/\(id3)") }
            #expect(try waitForSameHistory([m1, m2]) == before)
            #expect(cluster.conflictCopies().isEmpty)
        }
    }
}
