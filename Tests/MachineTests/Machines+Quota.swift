import Foundation
import Testing

/// The store's limits across machines.
extension Machines {
    /// Writes that each fit, made on both sides of a partition, together pass the byte quota.
    @Test(.timeLimit(.minutes(3)))
    func overflowAfterAPartitionAgreesEverywhereAndRecoversAsRoomIsMade() throws {
        try withCluster(machines: 2) { cluster in
            let (m1, m2) = (cluster.machines[0], cluster.machines[1])
            try m1.ok("echo start > \"$M/start\"")
            try cluster.waitForAgreement()
            try cluster.partition(m2)
            // Six values of 100,001 bytes on each side: 600 KB each, 1.2 MB together, past the 1 MiB quota.
            let fill = "for i in 1 2 3 4 5 6; do head -c 100000 /dev/zero | tr '\\0' x > \"$M/$ME-$i\"; done"
            try m1.ok(fill)
            try m2.ok(fill)
            try cluster.heal(m2)
            // Admitted oldest first: m1's six, then m2's first four; m2-5 and m2-6 would pass the limit.
            let setAside = "jq -c .setAside \"$M/.kvfs/status\""
            for machine in cluster.machines {
                try waitUntil(seconds: 90, "\(machine.name) to set m2-5 and m2-6 aside", every: 0.05) {
                    try machine.output(setAside) == "[\"m2-5\",\"m2-6\"]\n"
                }
            }
            let listing = try cluster.waitForAgreement()
            #expect(listing.split(separator: "\n").count == 1 + 6 + 4)
            for machine in cluster.machines {
                // What df shows used is what is visible: "start\n" and ten values.
                #expect(try machine.ok("df -B1 --output=used \"$M\" | tail -1 | tr -d ' '") == "\(6 + 10 * 100_001)\n")
                #expect(try machine.ok("grep -c '\"QuotaViolationChange\"' \"$M/.kvfs/changes.log\"") != "0\n")
            }
            // Room made on m1 brings the set-aside values back, oldest first, on both machines.
            try m1.ok("rm \"$M/m1-1\"")
            for machine in cluster.machines {
                try waitUntil(seconds: 30, "m2-5 back on \(machine.name)", every: 0.05) { try machine.output(setAside) == "[\"m2-6\"]\n" }
            }
            try m2.ok("rm \"$M/m2-1\"")
            for machine in cluster.machines {
                try waitUntil(seconds: 30, "m2-6 back on \(machine.name)", every: 0.05) { try machine.output(setAside) == "[]\n" }
            }
            #expect(try cluster.waitForAgreement().split(separator: "\n").count == 1 + 5 + 5)
            #expect(try m1.ok("wc -c < \"$M/m2-6\"") == "100001\n")
        }
    }
}
