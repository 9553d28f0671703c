import Foundation
@_exported import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Several simulated machines on one host, each a kvfs mount with its own
/// Syncthing, joined by a network switch: a bridge in a network namespace of
/// its own, one veth link to each machine (10.77.0.N/24). ``partition(_:)``
/// takes a machine's link down; ``heal(_:)`` brings it back.
///
/// Everything it creates is named `kvm-<pid>-<n>-…` and removed by
/// ``close()`` — namespaces, processes, mounts, files — whatever state a
/// failed test left it in.
final class Cluster {
    /// The machines, `m1`, `m2`, … in order.
    private(set) var machines: [Machine] = []
    /// Where the machines' files live (`<root>/m1`, …): `kvfs-machines-<pid>-<n>-…` in the temporary directory.
    var root: String { folder.path }
    private let folder: TemporaryFolder
    private let prefix: String
    private var switchNamespace: String { prefix + "switch" }
    nonisolated(unsafe) private static var created = 0

    /// Creates the switch and `count` machines, starts their Syncthing
    /// instances and links every pair; with `mount`, mounts kvfs on each
    /// (`--syncthing` when `integration`), the first one first, the others
    /// once the store id has reached them, as a person setting up machines would.
    init(machines count: Int, syncthing: Bool = true, mount: Bool = true, integration: Bool = true,
         rescanInterval: Int = 10, watcherDelay: Int = 1) throws {
        Self.removeLeftovers
        Self.created += 1
        prefix = "kvm-\(getpid())-\(Self.created)-"
        folder = TemporaryFolder("kvfs-machines-\(getpid())-\(Self.created)")
        do {
            try host("ip netns add \(switchNamespace) && ip -n \(switchNamespace) link add br0 type bridge && ip -n \(switchNamespace) link set br0 up")
            for index in 1...count {
                let machine = try Machine(index: index, cluster: self, prefix: prefix, folder: root + "/m\(index)")
                machines.append(machine)
                try host("""
                    ip link add eth0 netns \(machine.namespace) type veth peer name v\(index) netns \(switchNamespace) && \
                    ip -n \(switchNamespace) link set v\(index) master br0 up && \
                    ip -n \(machine.namespace) addr add \(machine.address)/24 dev eth0 && \
                    ip -n \(machine.namespace) link set eth0 up && ip -n \(machine.namespace) link set lo up
                    """)
                try machine.startHolder()
            }
            if syncthing {
                for machine in machines { try machine.configureSyncthing(rescanInterval: rescanInterval, watcherDelay: watcherDelay) }
                for machine in machines { try machine.startSyncthing() }
                for machine in machines { try machine.link(to: machines) }
                try waitUntil(seconds: 60, "every Syncthing connected to every other", every: 0.05) {
                    machines.allSatisfy { $0.connectedPeers() == machines.count - 1 }
                }
            }
            if mount {
                for (index, machine) in machines.enumerated() {
                    if index > 0 {
                        try waitUntil(seconds: 30, "store-id on \(machine.name)", every: 0.05) { FileManager.default.fileExists(atPath: machine.sync + "/store-id") }
                    }
                    try machine.mount(integration: integration)
                    try machine.scan()  // store-id and the device folder leave now, whatever the watcher's delay
                }
            }
        } catch {
            close()
            throw error
        }
    }

    /// Takes `machine`'s network link down: it no longer reaches anyone.
    func partition(_ machine: Machine) throws { try host("ip -n \(switchNamespace) link set v\(machine.index) down") }

    /// Brings `machine`'s link back.
    func heal(_ machine: Machine) throws { try host("ip -n \(switchNamespace) link set v\(machine.index) up") }

    /// Waits until `machines` show the same keys with the same contents (and at least one key); returns that listing.
    @discardableResult
    func waitForAgreement(_ machines: [Machine]? = nil, seconds: TimeInterval = 60) throws -> String {
        let group = machines ?? self.machines
        var listings: [String] = []
        try waitUntil(seconds: seconds, "\(group.map(\.name).joined(separator: ", ")) to show the same store", every: 0.05) {
            listings = try group.map { try $0.listing() }
            return !listings[0].isEmpty && listings.allSatisfy { $0 == listings[0] }
        } failure: {
            zip(group, listings).map { "--- \($0.name):\n\($1)" }.joined(separator: "\n")
        }
        return listings[0]
    }

    /// Files under every machine's sync directory whose names say Syncthing found a conflict.
    func conflictCopies() -> [String] {
        let names = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        return names.filter { $0.contains("/sync/") && $0.contains(".sync-conflict-") }
    }

    /// Unmounts cleanly where it can, then kills every process of every
    /// machine, removes the namespaces and the files.
    func close() {
        for machine in machines { machine.unmount() }
        for machine in machines { machine.kill() }
        for namespace in machines.map(\.namespace) + [switchNamespace] {
            _ = try? runShell("ip netns del \(namespace) 2>/dev/null", in: "/", environment: Machine.hostEnvironment, timeout: 20)
        }
        folder.cleanup()
        machines = []
    }

    /// Runs a script on the host (for `ip` commands); it must succeed.
    func host(_ script: String) throws {
        let result = try runShell(script, in: "/", environment: Machine.hostEnvironment, timeout: 30)
        guard result.status == 0 else { throw MachineError("host: \(script)\n\(result)") }
    }

    /// Namespaces, processes and folders of earlier test runs that were
    /// killed before they could clean up (their pid no longer runs): gone
    /// before the first cluster of this run is made.
    private static let removeLeftovers: Void = {
        _ = try? runShell(#"""
            for ns in $(ip netns list | awk '/^kvm-[0-9]+-/ { print $1 }'); do
                pid=${ns#kvm-}; pid=${pid%%-*}
                [ -d /proc/$pid ] && continue
                for p in $(ip netns pids "$ns"); do kill -9 "$p"; done
                ip netns del "$ns"
            done
            for folder in /tmp/kvfs-machines-[0-9]*-[0-9]*; do
                [ -d "$folder" ] || continue
                pid=${folder#/tmp/kvfs-machines-}; pid=${pid%%-*}
                [ -d /proc/$pid ] || rm -rf --one-file-system "$folder"
            done
            """#, in: "/", environment: Machine.hostEnvironment, timeout: 60)
    }()

    /// Why machine tests cannot run here, or nil when they can.
    static let unavailableReason: String? = {
        if let reason = MountEnvironment.fuseUnavailableReason { return "FUSE cannot be mounted: \(reason)" }
        guard geteuid() == 0 else { return "network and mount namespaces need root" }
        for tool in ["ip", "unshare", "nsenter", "syncthing", "curl", "python3", "setsid"] {
            let result = try? runShell("command -v \(tool)", in: "/", environment: Machine.hostEnvironment, timeout: 10)
            if result?.status != 0 { return "\(tool) is not installed" }
        }
        let probe = "kvm-\(getpid())-probe"
        let result = try? runShell("ip netns add \(probe) && ip netns exec \(probe) unshare --mount --pid --fork --mount-proc true; status=$?; ip netns del \(probe); exit $status",
                                   in: "/", environment: Machine.hostEnvironment, timeout: 20)
        guard result?.status == 0 else { return "cannot make network, mount and PID namespaces: \(result?.error ?? "")" }
        return nil
    }()

    /// Whether the machine tests can run; prints why not, so that a skip is never silent.
    static var available: Bool {
        if let reason = unavailableReason {
            print("MachineTests: SKIPPED — \(reason)")
            return false
        }
        return true
    }
}

/// Runs `body` with a fresh cluster, closed afterwards whatever happens.
func withCluster(machines count: Int, syncthing: Bool = true, mount: Bool = true, integration: Bool = true,
                 rescanInterval: Int = 10, watcherDelay: Int = 1, _ body: (Cluster) throws -> Void) throws {
    try MountEnvironment.requireBinary()
    let cluster = try Cluster(machines: count, syncthing: syncthing, mount: mount, integration: integration,
                              rescanInterval: rescanInterval, watcherDelay: watcherDelay)
    defer { cluster.close() }
    try body(cluster)
}

/// A failed step of a machine test.
struct MachineError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
