import Foundation
import Testing

/// "Why didn't my laptop get the value?" — answered by `kvfs status`.
extension Machines {
    @Test(.enabled(if: KVFSFeature.health.isBuilt, KVFSFeature.health.missing), .timeLimit(.minutes(4)))
    func statusCallsOutTheMachineWhoseSyncthingStopped() throws {
        try withCluster(machines: 2) { cluster in
            let (desktop, laptop) = (cluster.machines[0], cluster.machines[1])
            try desktop.ok("echo light > \"$M/theme\"")
            try cluster.waitForAgreement()
            let laptopID = try laptop.deviceID()
            let stale = "--stale-after \(Self.staleAfter)"
            // The laptop's folder (its name, its progress) has fully reached the desktop before its Syncthing stops.
            try waitUntil(seconds: 60, "the desktop to see the laptop active, with its progress", every: 0.05) {
                let entry = try Self.device(laptopID, on: desktop, stale)
                return entry?["state"] as? String == "active" && entry?["name"] as? String == laptop.name
                    && (entry?["read"] as? [String: Any])?.isEmpty == false
            }
            try laptop.stopSyncthing()
            try desktop.ok("echo dark > \"$M/theme\"")
            // The laptop's Syncthing is down: it does not get the value, and once nothing of it has arrived for
            // longer than the threshold (devices publish a heartbeat every 30 s), the desktop calls it out.
            try waitUntil(seconds: Double(Self.staleAfter) + 60, "the desktop to call the laptop quiet", every: 0.05) {
                try Self.device(laptopID, on: desktop, stale)?["state"] as? String == "quiet"
            }
            #expect(try laptop.ok("cat \"$M/theme\"") == "light\n")
            let entry = try #require(try Self.device(laptopID, on: desktop, stale))
            #expect((entry["behindSeconds"] as? Double ?? 0) > 0, "the laptop has not read the desktop's last write: \(entry)")
            let summary = try desktop.ok("kvfs status $S \(stale)")
            #expect(summary.contains("m2") && summary.contains("quiet") && summary.contains("warnings:\n"), "\(summary)")
            let json = try desktop.ok("kvfs status $S --json \(stale)")
            #expect(json.contains("\"kind\" : \"quiet\"") || json.contains("\"kind\":\"quiet\""), "\(json)")
            // Syncthing back: the value arrives, and the laptop is active again.
            try laptop.startSyncthing()
            try waitUntil(seconds: 60, "dark on the laptop", every: 0.05) { try laptop.output("cat \"$M/theme\"") == "dark\n" }
            try waitUntil(seconds: 60, "the laptop active again", every: 0.05) {
                try Self.device(laptopID, on: desktop, stale)?["state"] as? String == "active"
            }
        }
    }

    /// Seconds without news after which status calls a device quiet, in this test: past the 30 s heartbeat.
    static let staleAfter = 40

    /// A device's entry in `kvfs status --json` on `machine`.
    static func device(_ id: String, on machine: Machine, _ options: String) throws -> [String: Any]? {
        let json = try machine.output("kvfs status $S --json \(options)")
        let status = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return (status?["devices"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }
}
