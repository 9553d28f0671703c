import Foundation
import Testing

/// A sealed store on two machines through Syncthing (issue 26, done when): the second machine is paired with
/// `kvfs pair`/`kvfs join` and reads every value; no value or key name is in either sync directory; and once
/// revoked, the second machine's new writes are refused on the first.
extension Machines {
    /// The values m1 writes once it has sealed the store, and their key names: none may be found in a sync directory.
    static let sealedValues = (0..<8).map { ("sealed-key-\($0)-\(UUID().uuidString.prefix(8))", "sealed-value-\($0)-\(UUID().uuidString)") }

    @Test(.enabled(if: KVFSFeature.seal.isBuilt, KVFSFeature.seal.missing), .timeLimit(.minutes(6)))
    func aMachinePairedThroughSyncthingReadsASealedStoreAndARevokedOneIsRefused() throws {
        try withCluster(machines: 2) { cluster in
            let (m1, m2) = (cluster.machines[0], cluster.machines[1])
            // m1 seals the new store, with no mount running; m2, a plain device meeting a sealed store, stays
            // unmounted until it has joined. Then m1 writes the values.
            m2.unmount()
            m1.unmount()
            // kvfs seal adopts m2's folder, and refuses while m2 looks alive there: its unmount reaches m1
            // through Syncthing a moment later. Any other failure fails at once.
            try m1.ok("""
                i=0; until kvfs seal $S > "$KVM_FOLDER/seal.out" 2> "$KVM_FOLDER/seal.err"; do
                    grep -q 'cannot seal the store yet' "$KVM_FOLDER/seal.err" && [ $i -lt 300 ] || { cat "$KVM_FOLDER/seal.err"; exit 1; }
                    i=$((i + 1)); sleep 0.1
                done
                """)
            try m1.mount()
            for (key, value) in Self.sealedValues { try m1.ok("printf %s '\(value)' > \"$M/\(key)\"") }
            try waitUntil(seconds: 60, "the roster on m2", every: 0.05) {
                ((try? FileManager.default.contentsOfDirectory(atPath: m2.sync + "/roster")) ?? []).count == 1
            }
            // kvfs pair on m1 (in the background: it waits), its code typed into kvfs join on m2.
            try m1.ok("setsid kvfs pair $S --timeout 120 > \"$KVM_FOLDER/pair.out\" 2>&1 < /dev/null &")
            let pairOut = m1.folder + "/pair.out"
            try waitUntil(seconds: 30, "the pairing code on m1", every: 0.05) {
                ((try? String(contentsOfFile: pairOut, encoding: .utf8)) ?? "").split(separator: "\n").count >= 2
            }
            let code = try String(contentsOfFile: pairOut, encoding: .utf8).split(separator: "\n")[1]
            #expect(code.split(separator: " ").count == 16)
            #expect(try m2.ok("echo '\(code)' | kvfs join $S --device-name m2 --timeout 120").hasPrefix("joined:"))
            try waitUntil(seconds: 60, "kvfs pair to end on m1", every: 0.1) {
                ((try? String(contentsOfFile: pairOut, encoding: .utf8)) ?? "").contains("paired m2 (")
            }
            // m2 mounted again, now a member: it reads every value.
            try m2.mount()
            for (key, value) in Self.sealedValues {  // a string's file ends with a newline (docs/files.md)
                try waitUntil(seconds: 60, "\(key) on m2", every: 0.05) { try m2.output("cat \"$M/\(key)\"") == value + "\n" }
            }
            try m2.ok("echo from-m2 > \"$M/m2-key\"")
            try waitUntil(seconds: 60, "m2's write on m1", every: 0.05) { try m1.output("cat \"$M/m2-key\"") == "from-m2\n" }
            // Nothing written is in either sync directory in the clear.
            for machine in [m1, m2] {
                for (key, value) in Self.sealedValues + [("m2-key", "from-m2")] {
                    #expect(try machine.run("grep -rqF -e '\(key)' -e '\(value)' \"$SYNC\"").status == 1, "\(machine.name): \(key) found in the clear")
                }
            }
            // m1 revokes m2 (still running: --force). m2, still mounted, writes on into its folder: once that has
            // reached m1 whole, m1 shows none of it, and its status says why.
            let id2 = try m2.deviceID()
            try m1.ok("kvfs retire m2 --revoke --force $S")
            try waitUntil(seconds: 60, "the revocation on m2", every: 0.05) {
                ((try? FileManager.default.contentsOfDirectory(atPath: m2.sync + "/roster")) ?? []).count == 3
            }
            try m2.ok("echo after-revoke > \"$M/revoked-key\"; echo changed > \"$M/m2-key\"")
            try m2.scan()
            try waitUntil(seconds: 60, "m2's folder with its new writes on m1", every: 0.1) {
                try FileManager.default.fileExists(atPath: m1.sync + "/devices/\(id2)") && m2.completion(of: m1) >= 100
            }
            try waitUntil(seconds: 30, "m1 to refuse m2's folder", every: 0.1) {
                try m1.output("kvfs status $S").contains("not a member")
            }
            #expect(try m1.run("cat \"$M/revoked-key\"").status != 0)
            #expect(try m1.ok("cat \"$M/m2-key\"") == "from-m2\n")
            #expect(cluster.conflictCopies().isEmpty)
        }
    }
}
