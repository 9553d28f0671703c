import Foundation
import Testing

/// Issue 40 items 2 and 3: a bucket carries the sync root between two
/// machines that are never on together, each with its own state and its own
/// sync root (a `HOME` and `XDG_*` of its own), through moto's S3 emulator on
/// 127.0.0.1 and real mounts.
@Suite("A bucket carries the stores between machines never on together",
       .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"),
       .enabled(if: MotoServer.program != nil, "moto_server is not installed (mount-scripts/install-deps.sh installs it)"))
struct BucketSyncTests {
    /// Runs `body` in a sandbox with moto's emulator holding the bucket `kvfs-test`, stopped afterwards whatever
    /// happens, and a prelude for its scripts: the shell functions `laptop` and `desktop`: run a command as one machine
    /// or the other (a `HOME` and `XDG_*` of its own under `$T/laptop` or `$T/desktop`), with the emulator's
    /// endpoint and test credentials in the environment.
    func withMachines(_ body: (_ sandbox: Sandbox, _ prelude: String) throws -> Void) throws {
        try withSandbox { sandbox in
            let moto = try MotoServer(logIn: sandbox.path)
            defer { moto.stop() }
            try moto.createBucket("kvfs-test")
            try body(sandbox, """
                export AWS_ACCESS_KEY_ID=AKIAKVFSTEST AWS_SECRET_ACCESS_KEY=kvfs-secret-value AWS_ENDPOINT_URL=\(moto.endpoint)
                laptop() { env HOME=$T/laptop XDG_DATA_HOME=$T/laptop/data XDG_STATE_HOME=$T/laptop/state XDG_CONFIG_HOME=$T/laptop/config "$@"; }
                desktop() { env HOME=$T/desktop XDG_DATA_HOME=$T/desktop/data XDG_STATE_HOME=$T/desktop/state XDG_CONFIG_HOME=$T/desktop/config "$@"; }
                mkdir -p $T/laptop $T/desktop $T/ml $T/md

                """)
        }
    }

    @Test("laptop writes and syncs, powers off; desktop syncs, mounts, has every value, removal and version; desktop writes, laptop catches up",
          .plainOnly("a sealed store's second machine joins by pairing, whose files the bucket does not carry yet (docs/buckets.md § Limits)"))
    func storeAndForward() throws {
        try withMachines { sandbox, prelude in
            let output = try sandbox.ok(prelude + """
                laptop kvfs bucket add s3://kvfs-test/root
                laptop kvfs mount $T/ml --device-name laptop
                echo one > $T/ml/one; echo two > $T/ml/two; echo gone > $T/ml/gone; rm $T/ml/gone; echo one-again > $T/ml/one
                laptop kvfs set --store com.example.notes note hello
                laptop kvfs unmount $T/ml
                laptop kvfs sync --once
                echo -- desktop
                desktop kvfs bucket add s3://kvfs-test/root
                desktop kvfs sync --once
                desktop kvfs mount $T/md --device-name desktop
                ls $T/md; cat $T/md/one $T/md/two
                desktop kvfs history one --json | jq -c '[.[] | [.kind, .value, .device]]'
                desktop kvfs history gone --json | jq -c '[.[] | .kind]'
                desktop kvfs get --store com.example.notes note
                echo three > $T/md/three; rm $T/md/two
                desktop kvfs unmount $T/md
                desktop kvfs sync --once
                echo -- laptop
                laptop kvfs sync --once
                laptop kvfs ls
                laptop kvfs get three
                laptop kvfs devices --json | jq -r '.[].name' | sort
                """, timeout: 180)
            #expect(output == """
                added s3://kvfs-test/root: it honours conditional writes; `kvfs sync` carries the sync root through it
                -- desktop
                added s3://kvfs-test/root: it honours conditional writes; `kvfs sync` carries the sync root through it
                one
                two
                one-again
                two
                [["value","one","laptop"],["value","one-again","laptop"]]
                ["value","removal"]
                hello
                -- laptop
                one
                three
                three
                desktop
                laptop

                """)
        }
    }

    @Test("a copy of a machine's state (a copied home, a restored VM) is caught at its first head write after the copy: 412, reported, nothing overwritten",
          .plainOnly("a sealed store's second machine joins by pairing, whose files the bucket does not carry yet (docs/buckets.md § Limits)"))
    func clone() throws {
        try withMachines { sandbox, prelude in
            let output = try sandbox.ok(prelude + """
                laptop kvfs bucket add s3://kvfs-test/root > /dev/null
                laptop kvfs set k 1; laptop kvfs sync --once
                cp -a $T/laptop $T/copy
                copy() { env HOME=$T/copy XDG_DATA_HOME=$T/copy/data XDG_STATE_HOME=$T/copy/state XDG_CONFIG_HOME=$T/copy/config "$@"; }
                laptop kvfs set k 2; laptop kvfs sync --once
                copy kvfs set from-copy x
                copy kvfs sync --once 2>&1; echo "status $?"
                copy kvfs sync --once 2>/dev/null; echo "again $?"
                copy kvfs status | grep -c '^bucket: *s3://kvfs-test/root: .* requests this hour, last error: this machine.s bucket head'
                laptop kvfs status | grep '^bucket' | sed -E 's/(upload|download) [0-9][^,]*/\\1 DATE/g; s/, [1-9][0-9]* requests/, N requests/'
                desktop kvfs bucket add s3://kvfs-test/root > /dev/null
                desktop kvfs sync --once
                desktop kvfs ls; desktop kvfs get k
                """, timeout: 120)
            let machine = try Self.machine(of: sandbox.path + "/laptop")
            #expect(output == """
                Error: this machine's bucket head (\(machine)) was written by another machine with a copy of this state directory: nothing was overwritten; remove $XDG_STATE_HOME/kvfs/buckets/ on the copy to make it a machine of its own
                status 1
                again 1
                1
                bucket:     s3://kvfs-test/root: last upload DATE, last download never, N requests this hour, last error: none
                k
                2

                """)
        }
    }

    /// The machine id a machine's home keeps in its bucket ledger.
    static func machine(of home: String) throws -> String {
        let buckets = home + "/state/kvfs/buckets"
        let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: buckets).first)
        let ledger = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(buckets)/\(folder)/ledger.json")))
        return try #require((ledger as? [String: Any])?["machine"] as? String)
    }

    @Test("kvfs bucket and kvfs sync: each failure one line with its status (kvfs sync says a failure once, however often it retries); the list in $XDG_CONFIG_HOME; no credential written anywhere")
    func commands() throws {
        try withMachines { sandbox, prelude in
            let output = try sandbox.ok(prelude + """
                laptop kvfs bucket add kvfs-test 2>&1; echo "status $?"
                laptop kvfs sync --once 2>&1; echo "status $?"
                laptop kvfs bucket rm s3://kvfs-test/none 2>&1; echo "status $?"
                env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME=$T/laptop XDG_CONFIG_HOME=$T/laptop/config kvfs bucket add s3://kvfs-test/root 2>&1; echo "status $?"
                laptop kvfs bucket add s3://kvfs-test/root --region us-east-1 > /dev/null
                laptop kvfs bucket add s3://kvfs-test/root 2>&1; echo "status $?"
                laptop kvfs bucket add s3://kvfs-test/other --endpoint http://127.0.0.1:1 2>&1; echo "status $?"
                laptop kvfs bucket ls
                laptop kvfs set k v; laptop kvfs sync --once; echo "status $?"
                ls $T/laptop/config/kvfs
                grep -rl -e kvfs-secret-value -e AKIAKVFSTEST $T/laptop | wc -l
                laptop kvfs bucket rm s3://kvfs-test/root; laptop kvfs bucket ls
                curl -s -X PUT $AWS_ENDPOINT_URL/kvfs-gone; desktop kvfs bucket add s3://kvfs-gone > /dev/null
                curl -s -X DELETE $AWS_ENDPOINT_URL/kvfs-gone
                desktop timeout 4 kvfs sync --fastest 0.1 --slowest 0.2 2> $T/sync.err; echo "status $?"
                wc -l < $T/sync.err; grep -c '^kvfs sync: s3://kvfs-gone: [a-z ]*: 404 NoSuchBucket$' $T/sync.err
                """, timeout: 120)
            #expect(output == """
                Error: 'kvfs-test' is not an s3:// URL (give s3://BUCKET or s3://BUCKET/PREFIX)
                status 64
                Error: no bucket is added: kvfs bucket add s3://BUCKET[/PREFIX] first
                status 1
                Error: no bucket s3://kvfs-test/none is added (kvfs bucket ls lists them)
                status 1
                Error: no AWS credentials for profile 'default': set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add the profile to ~/.aws/credentials
                status 1
                Error: s3://kvfs-test/root is added already (kvfs bucket rm it first to change its settings)
                status 1
                Error: writing a probe object to s3://kvfs-test/other: network: cannot connect
                status 1
                BUCKET               ENDPOINT  REGION     PROFILE
                s3://kvfs-test/root  -         us-east-1  -
                status 0
                buckets.json
                0
                BUCKET  ENDPOINT  REGION  PROFILE
                status 124
                1
                1

                """)
        }
    }

    @Test("a running kvfs sync uploads a write at once, though its wait had grown while idle",
          .plainOnly("a sealed store's second machine joins by pairing, whose files the bucket does not carry yet (docs/buckets.md § Limits)"))
    func writeWakesSync() throws {
        try withMachines { sandbox, prelude in
            let output = try sandbox.ok(prelude + """
                laptop kvfs bucket add s3://kvfs-test/root > /dev/null; desktop kvfs bucket add s3://kvfs-test/root > /dev/null
                laptop kvfs set first 1
                env HOME=$T/laptop XDG_DATA_HOME=$T/laptop/data XDG_STATE_HOME=$T/laptop/state XDG_CONFIG_HOME=$T/laptop/config \\
                    kvfs sync --fastest 1 --slowest 60 & loop=$!
                sleep 8   # idle rounds at about 1, 3 and 7 s: the next would come at about 15 s
                laptop kvfs set second 2
                for i in $(seq 25); do desktop kvfs sync --once; [ "$(desktop kvfs get second 2>/dev/null)" = 2 ] && break; sleep 0.2; done
                kill $loop; wait $loop
                desktop kvfs get second; echo "polls $i"
                """, timeout: 120)
            let polls = Int(output.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 99
            #expect(output.hasPrefix("2\npolls "))
            #expect(polls <= 10, "the write reached desktop within some 10 polls (about 3 s), not at laptop's next idle round")
        }
    }
}
