import Foundation
import Testing

/// Issue 16 item 1: one synchronizer folder, the sync root, carries every
/// store; a store made on one machine appears on the others with nothing to
/// set up, and a mount of each store shows only its keys.
extension Machines {
    @Test(.timeLimit(.minutes(3)))
    func syncingTheRootCarriesEveryStore() throws {
        try withCluster(machines: 2, mount: false) { cluster in
            let (m1, m2) = (cluster.machines[0], cluster.machines[1])
            // Each Syncthing shares its machine's sync root ($XDG_DATA_HOME/kvfs/), as a user would set it up.
            for machine in cluster.machines {
                try machine.ok("""
                    mkdir -p "$XDG_DATA_HOME/kvfs/.stfolder"
                    st PATCH /rest/config/folders/kvfs '{"path":"'"$XDG_DATA_HOME/kvfs"'"}' >/dev/null
                    """)
            }
            // On m1: two stores, one mounted and one written by the command line.
            try m1.ok("""
                kvfs mount "$M" --store com.example.notes && echo dark > "$M/theme"
                kvfs set volume 11 --type integer --store com.example.todo
                """)
            // On m2 they appear by themselves: listed, then opened by their identifiers.
            try waitUntil(seconds: 60, "both stores listed on m2", every: 0.05) {
                try m2.output("kvfs stores | awk 'NR > 1 { print $1, $2 }'") == "com.example.notes 1\ncom.example.todo 1\n"
            } failure: {
                (try? m2.run("kvfs stores; find \"$XDG_DATA_HOME/kvfs\" | sort").output) ?? ""
            }
            #expect(try m2.ok("""
                kvfs mount "$M" --store com.example.notes
                ls "$M"; cat "$M/theme"
                kvfs get volume --store com.example.todo; kvfs ls --store com.example.todo
                echo light > "$M/theme"
                """) == "theme\ndark\n11\nvolume\n")
            // And back the other way.
            try waitUntil(seconds: 60, "m2's write on m1", every: 0.05) { try m1.output("cat \"$M/theme\"") == "light\n" }
            #expect(try m1.ok("ls \"$M\"") == "theme\n")
            let conflicts = try m1.ok("find \"$XDG_DATA_HOME/kvfs\" -name '*.sync-conflict-*' | wc -l")
            #expect(conflicts == "0\n")
        }
    }
}
