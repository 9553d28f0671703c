import Foundation
import Testing

/// Issue 16 item 7: keys that differ only in normalization (`café` with
/// U+00E9, and with `e` + U+0301) stay two keys through Syncthing.
extension Machines {
    @Test(.timeLimit(.minutes(3)))
    func keysThatDifferOnlyInNormalizationStayTwoAcrossMachines() throws {
        try withCluster(machines: 2) { cluster in
            let (m1, m2) = (cluster.machines[0], cluster.machines[1])
            let spellings = #"A=$(printf 'caf\303\251'); B=$(printf 'cafe\314\201')"# + "\n"
            try m1.ok(spellings + #"printf one > "$M/$A""#)
            try m2.ok(spellings + #"printf two > "$M/$B""#)
            try cluster.waitForAgreement()
            for machine in cluster.machines {
                #expect(try machine.ok(spellings + #"""
                    python3 -c 'import os, sys; print(sorted(set(os.listdir(os.fsencode(sys.argv[1]))) - {b".kvfs"}))' "$M"
                    cat "$M/$A" "$M/$B"
                    """#) == "[b'cafe\\xcc\\x81', b'caf\\xc3\\xa9']\none\ntwo\n", "\(machine.name)")
            }
            #expect(cluster.conflictCopies().isEmpty)
        }
    }
}
