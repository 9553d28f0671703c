import Foundation
import Testing

/// Retiring a machine for good, and a device folder that merely vanishes.
extension Machines {
    @Test(.enabled(if: KVFSFeature.retire.isBuilt, KVFSFeature.retire.missing), .timeLimit(.minutes(4)))
    func aRetiredMachineKeepsEveryValueAndRemovalItWonEverywhere() throws {
        try withCluster(machines: 3) { cluster in
            let (m1, m2, m3) = (cluster.machines[0], cluster.machines[1], cluster.machines[2])
            try m1.ok("echo m1-old > \"$M/k0\"; echo m1 > \"$M/d0\"")
            try cluster.waitForAgreement()
            try m3.ok("echo m3-new > \"$M/k0\"; echo m3 > \"$M/r0\"; rm \"$M/d0\"")
            let expected = try cluster.waitForAgreement()
            let id3 = try m3.deviceID()
            // A device folder that merely vanishes (a mistake, a synchronizer mid-transfer) costs nothing:
            // Syncthing carries the removal everywhere, and m3, still running, writes its folder again.
            try m2.ok("rm -rf \"$SYNC/devices/\(id3)\"")
            try waitUntil(seconds: 60, "m3's folder back on m2", every: 0.05) { FileManager.default.fileExists(atPath: m2.sync + "/devices/\(id3)/device.json") }
            #expect(try cluster.waitForAgreement() == expected)
            // m3 is retired for good: unmounted (its last progress says so), Syncthing stopped, retired from m1.
            m3.unmount()
            try waitUntil(seconds: 60, "m1 to see m3 stopped", every: 0.05) { try m1.output("kvfs devices $S | grep ' m3 '").contains("stopped") }
            try m3.stopSyncthing()
            #expect(try m1.ok("kvfs retire m3 $S").isEmpty == false)
            for machine in [m1, m2] {
                try waitUntil(seconds: 60, "m3's folder gone on \(machine.name)", every: 0.05) { !FileManager.default.fileExists(atPath: machine.sync + "/devices/\(id3)") }
                try waitUntil(seconds: 30, "m3 retired on \(machine.name)", every: 0.05) { try machine.output("kvfs devices $S | grep ' m3 '").contains("retired") }
            }
            #expect(try cluster.waitForAgreement([m1, m2]) == expected)
            #expect(try m2.ok("cat \"$M/k0\" \"$M/r0\"; [ ! -e \"$M/d0\" ] && echo d0 stays removed") == "m3-new\nm3\nd0 stays removed\n")
            #expect(cluster.conflictCopies().isEmpty)
        }
    }
}
