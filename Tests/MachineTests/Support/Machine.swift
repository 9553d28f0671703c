import Foundation
import LinuxSystem
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One simulated machine: its own network namespace (address 10.77.0.N on
/// the cluster's switch), mount namespace (its kvfs mount is invisible to
/// every other process), UTS namespace (host name `mN`, which kvfs takes as
/// the device name) and PID namespace, whose first process reaps what the
/// machine's scripts leave running and takes every one of them down when it
/// is killed.
///
/// ``run(_:timeout:)`` runs a shell script inside, with `kvfs` (or `$KVFS_BINARY`) on `PATH` and
/// these variables: `ME` (the name), `M` (the mount point), `SYNC`, `STATE`,
/// `S` (`--sync-dir $SYNC --state-dir $STATE`), `ST` (Syncthing's home) and
/// the helpers of ``prelude``.
final class Machine: @unchecked Sendable {  // changed only while the cluster is set up
    /// `m1`, `m2`, …
    let name: String
    /// Its number in the cluster (1…).
    let index: Int
    /// Its network namespace.
    let namespace: String
    /// Its address on the switch.
    var address: String { "10.77.0.\(index)" }
    /// Its folder on the host: `home`, `sync`, `state`, `mnt`, `syncthing`.
    let folder: String
    var sync: String { folder + "/sync" }
    var mountPoint: String { folder + "/mnt" }
    /// Syncthing's device id and API key, once configured.
    private(set) var syncthingID = ""
    private var apiKey = ""
    private var launcher: SpawnedProcess?
    private var holder: pid_t = 0

    init(index: Int, cluster: Cluster, prefix: String, folder: String) throws {
        self.index = index
        name = "m\(index)"
        namespace = prefix + name
        self.folder = folder
        for sub in ["home", "sync", "state", "mnt", "run"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        try cluster.host("ip netns add \(namespace)")
    }

    // MARK: Running things inside

    /// Runs a script inside the machine.
    func run(_ script: String, timeout: Int = 60) throws -> ShellResult {
        guard holder > 0 else { throw MachineError("\(name) is not running") }
        var environment = self.environment
        environment["KVM_SCRIPT"] = Self.prelude + "cd \"$KVM_FOLDER\" || exit 1\n" + script
        return try runShell("exec nsenter --target \(holder) --mount --net --uts --pid -- /bin/sh -c \"$KVM_SCRIPT\"",
                            in: folder, environment: environment, timeout: timeout)
    }

    /// Runs a script inside the machine that must succeed; returns its standard output.
    @discardableResult
    func ok(_ script: String, timeout: Int = 60, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(script, timeout: timeout)
        guard result.status == 0 else {
            Issue.record("\(name): script failed: \(script)\n\(result)", sourceLocation: sourceLocation)
            throw MachineError("\(name): script failed")
        }
        return result.output
    }

    /// Runs a script inside the machine; returns its standard output, or
    /// throws (recording nothing) when it fails: for the conditions a test
    /// polls, which may fail a few times before they hold.
    func output(_ script: String, timeout: Int = 60) throws -> String {
        let result = try run(script, timeout: timeout)
        guard result.status == 0 else { throw MachineError("\(name): \(script)\n\(result)") }
        return result.output
    }

    /// Helpers every script has:
    /// - `st METHOD PATH [BODY]`: one call to this machine's Syncthing REST API;
    /// - `listing`: every key file of the mount with its content's MD5, sorted.
    static let prelude = #"""
        st() { curl -sf -X "$1" -H "X-API-Key: $KVM_KEY" "http://127.0.0.1:8384$2" ${3:+-d "$3"}; }
        listing() { (cd "$M" && find . -mindepth 1 -maxdepth 1 -type f -exec md5sum {} + | LC_ALL=C sort -k 2); }

        """#

    private var environment: [String: String] {
        [
            "PATH": (MountEnvironment.kvfs as NSString).deletingLastPathComponent + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": folder + "/home",
            "XDG_DATA_HOME": folder + "/home/data",
            "XDG_STATE_HOME": folder + "/home/state",
            "XDG_CONFIG_HOME": folder + "/home/config",
            "XDG_RUNTIME_DIR": folder + "/run",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "KVM_FOLDER": folder,
            "KVM_KEY": apiKey,
            "ME": name,
            "M": mountPoint,
            "SYNC": sync,
            "STATE": folder + "/state",
            "ST": folder + "/syncthing",
            "S": "--sync-dir \(sync) --state-dir \(folder)/state",
        ]
    }

    /// The host's environment for host-side commands.
    static let hostEnvironment = [
        "PATH": ProcessInfo.processInfo.environment["PATH"].map { $0 + ":/usr/sbin:/sbin" } ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": ProcessInfo.processInfo.environment["HOME"] ?? "/root",
        "LANG": "C.UTF-8",
    ]

    /// Starts the machine's first process: `ip netns exec` into its network
    /// namespace, `unshare` the others, and a reaper as PID 1.
    func startHolder() throws {
        let reaper = "import os, time\nwhile True:\n    try: os.wait()\n    except ChildProcessError: time.sleep(0.05)\n"
        let script = "hostname \(name) && exec python3 -c '\(reaper)'"
        let arguments = ["/usr/bin/env", "ip", "netns", "exec", namespace, "unshare", "--mount", "--uts", "--pid", "--fork",
                         "--mount-proc", "--propagation", "private", "--", "/bin/sh", "-c", script]
        var spawn = Spawn(arguments[0], Array(arguments.dropFirst()))
        spawn.environment = Self.hostEnvironment
        spawn.standardOutput = .appending(folder + "/holder.log")
        spawn.standardError = .appending(folder + "/holder.log")
        spawn.newSession = true  // signals unblocked: Dispatch's threads block SIGTERM
        let launcher = try spawn.start()
        self.launcher = launcher
        try waitUntil(seconds: 20, "\(name)'s namespaces", every: 0.05) {
            guard let text = try? String(contentsOfFile: "/proc/\(launcher.pid)/task/\(launcher.pid)/children", encoding: .utf8),
                  let child = pid_t(text.split(separator: " ").first ?? "") else { return false }
            holder = child
            return (try? run("[ \"$(hostname)\" = \"$ME\" ]").status) == 0
        }
    }

    /// Kills every process of the machine (killing its PID 1 kills them all), and its launcher.
    func kill() {
        if holder > 0 { Glibc.kill(holder, SIGKILL) }
        _ = try? launcher?.wait()
        holder = 0
        launcher = nil
    }

    // MARK: Syncthing

    /// Generates Syncthing's home (with mount-scripts/syncthing-pair.sh,
    /// the users' script): REST on the machine's own 127.0.0.1:8384, sync
    /// connections on its switch address.
    func configureSyncthing(rescanInterval: Int, watcherDelay: Int) throws {
        let result = try runShell("bash \"\(Self.pairScript)\" --configure-home \"$ST\" 127.0.0.1:8384 tcp://\(address):22000",
                                  in: folder, environment: environment, timeout: 60)
        guard result.status == 0 else { throw MachineError("\(name): configuring Syncthing failed\n\(result)") }
        for line in result.output.split(separator: "\n") {
            if line.hasPrefix("ID=") { syncthingID = String(line.dropFirst(3)) }
            if line.hasPrefix("APIKEY=") { apiKey = String(line.dropFirst(7)) }
        }
        folderSettings = (rescanInterval, watcherDelay)
    }

    private var folderSettings = (rescan: 10, watcherDelay: 1)

    /// Starts Syncthing (as one process) and waits until its REST API answers.
    func startSyncthing() throws {
        try ok("""
            STNOUPGRADE=1 STMONITORED=yes STHASHING=minio setsid syncthing serve --home="$ST" --no-browser --no-restart \
                --no-upgrade >>"$ST.log" 2>&1 </dev/null &
            echo $! >"$ST.pid"
            n=0
            until st GET /rest/system/ping >/dev/null 2>&1; do
                n=$((n + 1)); [ $n -lt 600 ] || { echo "Syncthing did not answer within 30 s" >&2; exit 1; }
                sleep 0.05
            done
            """)
    }

    /// Stops Syncthing and waits until it has exited.
    func stopSyncthing() throws {
        try ok("pid=$(cat \"$ST.pid\") && kill $pid && while kill -0 $pid 2>/dev/null; do sleep 0.05; done")
    }

    /// Tells Syncthing about the other machines (it dials those before it, so
    /// that no two dial each other) and shares the sync directory with them.
    func link(to machines: [Machine]) throws {
        for peer in machines where peer !== self {
            let address = peer.index < index ? "tcp://\(peer.address):22000" : "dynamic"
            try ok("st PUT /rest/config/devices/\(peer.syncthingID) '{\"deviceID\":\"\(peer.syncthingID)\",\"name\":\"\(peer.name)\",\"addresses\":[\"\(address)\"]}' >/dev/null")
        }
        let devices = machines.map { "{\"deviceID\":\"\($0.syncthingID)\"}" }.joined(separator: ",")
        try ok("""
            st PUT /rest/config/folders/kvfs '{"id":"kvfs","label":"kvfs","path":"\(sync)","type":"sendreceive",\
            "rescanIntervalS":\(folderSettings.rescan),"fsWatcherEnabled":true,"fsWatcherDelayS":\(folderSettings.watcherDelay),\
            "devices":[\(devices)]}' >/dev/null
            """)
    }

    /// How many other machines Syncthing is connected to now.
    func connectedPeers() -> Int {
        guard let output = try? run("st GET /rest/system/connections", timeout: 10).output,
              let object = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
              let connections = object["connections"] as? [String: [String: Any]] else { return 0 }
        return connections.values.filter { $0["connected"] as? Bool == true }.count
    }

    /// How complete `peer`'s copy of the sync directory is, as this machine's
    /// Syncthing knows it (0 to 100): 100 once the peer has every file this
    /// machine has, as far as their last exchange of indexes says.
    func completion(of peer: Machine) throws -> Double {
        try syncthingNumber("/rest/db/completion?folder=kvfs&device=\(peer.syncthingID)", "completion")
    }

    /// The sequence number of this machine's own index of the sync directory:
    /// it grows as Syncthing indexes a local change, which it then announces
    /// to every peer it is connected to.
    func indexSequence() throws -> Int {
        Int(try syncthingNumber("/rest/db/status?folder=kvfs", "sequence"))
    }

    /// A number field of a Syncthing REST answer.
    private func syncthingNumber(_ path: String, _ field: String) throws -> Double {
        let output = try self.output("st GET '\(path)'")
        guard let object = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
              let number = (object[field] as? NSNumber)?.doubleValue else {
            throw MachineError("\(name): no \(field) in \(path): \(output)")
        }
        return number
    }

    /// Asks Syncthing to scan the whole sync directory now.
    func scan() throws { try ok("st POST /rest/db/scan?folder=kvfs") }

    // MARK: kvfs

    /// Mounts kvfs on the machine's sync directory; with `integration`, asking
    /// Syncthing to scan after each commit (given as options on odd machines,
    /// in fstab's `-o` form on even ones).
    func mount(integration: Bool = true) throws {
        let syncthing = !integration ? ""
            : index % 2 == 1 ? " --syncthing http://127.0.0.1:8384 --syncthing-config \"$ST/config.xml\""
            : " -o syncthing=http://127.0.0.1:8384,syncthing_config=\"$ST/config.xml\""
        try ok("kvfs mount \"$M\" $S\(syncthing)")
    }

    /// Unmounts kvfs if it is mounted (`kvfs unmount`, inside).
    func unmount() {
        guard holder > 0 else { return }
        _ = try? run("if grep -q \" $M fuse.kvfs \" /proc/self/mounts; then kvfs unmount \"$M\"; fi", timeout: 30)
    }

    /// Every key file of the mount with its content's MD5, sorted (the `listing` helper).
    func listing() throws -> String { try output("listing") }

    /// This device's id in the store (`devices/<id>` of the sync directory).
    func deviceID() throws -> String {
        try ok("kvfs status $S --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[\"device\"][\"id\"])'")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// mount-scripts/syncthing-pair.sh in the source tree.
    static let pairScript = SyncthingPair.script
}
