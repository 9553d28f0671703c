import Foundation
@_spi(Benchmarks) import KVStore
import Synchronization
import TestSupport

/// One store of `kvfs-bench sealed`, plain or sealed, in a sync directory of
/// its own under `root`, its devices' state directories beside it. A sealed
/// one is sealed by its first device as `kvfs seal` seals (``Membership``),
/// and every other device joins it with the recovery key, as `kvfs join
/// --recovery-key` does: the keys, roster and records are the real ones.
final class CostStore: Sendable {
    let sealing: Sealing
    let root: String
    /// The recovery key of a sealed store.
    private let recoveryKey: RecoveryKey?
    /// What the stores opened said (`warn`): a refusal fails the benchmark.
    private let warnings = Mutex<[String]>([])

    /// Makes the store, `device` its first device.
    init(root: String, sealing: Sealing, firstDevice device: String) throws {
        self.root = root
        self.sealing = sealing
        let sync = URL(fileURLWithPath: root + "/sync"), state = URL(fileURLWithPath: root + "/state-" + device)
        switch sealing {
        case .plain:
            try DeviceStore(syncDirectory: sync, stateDirectory: state, deviceName: device, warn: { _ in }).close()
            recoveryKey = nil
        case .sealed:
            recoveryKey = try Membership(syncDirectory: sync, stateDirectory: state).seal(deviceName: device).recoveryKey
        }
    }

    var sync: URL { URL(fileURLWithPath: root + "/sync") }

    func state(_ device: String) -> URL { URL(fileURLWithPath: root + "/state-" + device) }

    /// Makes `device` one of the store's devices: a member, when sealed.
    func join(_ device: String) throws {
        guard let recoveryKey else { return }
        try Membership(syncDirectory: sync, stateDirectory: state(device)).recover(with: recoveryKey, deviceName: device)
    }

    /// Opens the store as `device`.
    func open(_ device: String) throws -> DeviceStore {
        try DeviceStore(syncDirectory: sync, stateDirectory: state(device), deviceName: device,
                        warn: { [self] line in warnings.withLock { $0.append(line) } })
    }

    /// Throws when a store opened refused records (or said anything else of them).
    func checkWarnings() throws {
        let said = warnings.withLock { $0 }
        guard said.isEmpty else { throw OptionError(message: "the \(sealing) store warned:\n" + said.joined(separator: "\n")) }
    }

    /// The bytes of `device`'s folder: its segments and snapshots.
    func folderBytes(of device: DeviceID) -> Int {
        let folder = sync.path + "/devices/" + device.hex
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.reduce(0) { total, name in
            total + (((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    /// How many times `device`'s journal has moved to a new segment: each compaction moves it once
    /// (`journal-<generation in hex>.log`, from 1).
    func compactions(of device: DeviceID) -> Int {
        let folder = sync.path + "/devices/" + device.hex
        let generations = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).compactMap { name -> UInt64? in
            guard name.hasPrefix("journal-"), name.hasSuffix(".log") else { return nil }
            return UInt64(name.dropFirst("journal-".count).dropLast(".log".count), radix: 16)
        }
        return Int(generations.max() ?? 1) - 1
    }

    /// The seconds `device` takes to open the store and read it (`refresh()`), which then holds `expected`.
    func timeOpening(_ device: String, expecting expected: [StoreKey: PropertyListValue]) throws -> Double {
        var store: DeviceStore?
        defer { store?.close() }
        let time = try seconds {
            store = try open(device)
            _ = store?.refresh()
        }
        guard store?.values == expected else {
            throw OptionError(message: "\(device) of the \(sealing) store read \(store?.values.count ?? 0) values, not the \(expected.count) written")
        }
        try checkWarnings()
        return time
    }

    /// Mounts the store as `device` at `mount` with the `kvfs` beside this
    /// benchmark: the seconds until `kvfs mount` returned, and until every
    /// value of `expected` reads back through the mount (each key's file
    /// holds its value's file form), failing at once when the mount refuses
    /// a record or dies (``MountStatus``). Unmounts it again.
    func timeMount(_ device: String, at mount: String, expecting expected: [StoreKey: PropertyListValue]) throws -> (returned: Double, readable: Double) {
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let files = expected.map { (path: mount + "/" + $0.key.string, content: Data(FileForm.encode($0.value))) }
        var mounted: ShellResult?
        let returned = try seconds {
            mounted = try ChildProcess.run(MountPair.kvfs, ["mount", mount, "--sync-dir", sync.path, "--state-dir", state(device).path,
                                                            "--device-name", device])
        }
        guard let mounted, mounted.status == 0 else { throw ChildProcessError.failed("kvfs mount", mounted?.output ?? "") }
        defer { _ = try? ChildProcess.run(MountPair.kvfs, ["unmount", mount]) }
        let waited = try seconds {
            // A refused record's folder is never read: the wait ends at the first refusal (or when the mount dies).
            try MountStatus.waitUntil(seconds: 3600, "every value to read back through the mount of the \(sealing) store", through: mount) {
                files.allSatisfy { FileManager.default.contents(atPath: $0.path) == $0.content }
            }
        }
        return (returned, returned + waited)
    }
}
