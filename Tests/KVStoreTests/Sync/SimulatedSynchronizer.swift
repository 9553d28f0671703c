import Foundation
import Testing
@testable import KVStore

/// Copies each device's folder from the replica its device writes to the
/// other replicas, the ways file synchronizers and network file systems do:
/// whole files through a temporary name (Syncthing, Unison), a growing prefix
/// written in place (Dropbox, a slow copy), a later block first with a hole
/// of zeros before it (NFS writes arriving out of order), deletions late, and
/// files in any order. Stale `.syncthing.*.tmp` files are left behind too.
///
/// Every choice comes from the schedule's seeded generator, over devices in
/// the order they were registered and files in name order (never a
/// Dictionary's order, which differs from process to process), so that a
/// seed replays the same deliveries anywhere.
final class SimulatedSynchronizer {
    /// The sync directory of each replica.
    let replicas: [String]
    /// Which replica each device (by folder name) writes.
    private var owners: [String: Int] = [:]
    /// The devices' folder names, in the order they were registered.
    private var devices: [String] = []
    /// The devices' names, for the schedule's trace.
    private var names: [String: String] = [:]
    /// Replicas cut off from the others for now.
    var partitioned: Set<Int> = []

    init(replicas: [String]) { self.replicas = replicas }

    func register(device: DeviceID, name: String, replica: Int) {
        owners[device.hex] = replica
        names[device.hex] = name
        devices.append(device.hex)
    }

    /// Copies `store-id` from the first replica to the others (setting a store
    /// up by hand before the devices start, as one does with Syncthing).
    func shareStoreID() throws {
        let id = try #require(try Files.read(replicas[0] + "/store-id"))
        for replica in replicas.dropFirst() {
            try Files.makeDirectory(replica)
            try Files.writeAtomically(replica + "/store-id", id)
        }
    }

    /// Delivers one randomly chosen difference, in a randomly chosen way; says which, and how.
    func deliverOne(using random: inout SeededRandom) -> String {
        let reachable = devices.filter { !partitioned.contains(owners[$0]!) }
        guard let device = reachable.randomElement(using: &random), let source = owners[device] else { return "nothing to deliver" }
        let targets = replicas.indices.filter { $0 != source && !partitioned.contains($0) }
        guard !targets.isEmpty else { return "nothing to deliver" }
        let target = random.pick(targets)
        let differing = differences(of: device, from: source, to: target)
        guard let name = differing.randomElement(using: &random) else { return "nothing to deliver" }
        let how = deliver(name, of: device, from: source, to: target, using: &random)
        return "\(names[device] ?? device)'s \(name) reaches replica \(target): \(how)"
    }

    /// Delivers everything, whole, everywhere (the end of every schedule).
    func deliverAll() {
        for device in devices { deliverAll(of: device) }
    }

    /// Delivers one device's folder, whole, to every replica (partitions or not).
    func deliverAll(of device: DeviceID) { deliverAll(of: device.hex) }

    private func deliverAll(of device: String) {
        guard let source = owners[device] else { return }
        for target in replicas.indices where target != source {
            for name in differences(of: device, from: source, to: target) {
                copyWhole(name, of: device, from: source, to: target)
            }
        }
    }

    /// From now on `device`'s folder travels from `replica` (which removed
    /// it, retiring the device): the removal reaches the others, as a
    /// synchronizer carries a deletion.
    func carryFolder(of device: DeviceID, from replica: Int) { owners[device.hex] = replica }

    /// Removes a device's folder from one replica (a removal, or a synchronizer's hiccup).
    func removeFolder(of device: DeviceID, in replica: Int) {
        try? FileManager.default.removeItem(atPath: folder(device.hex, in: replica))
    }

    private func folder(_ device: String, in replica: Int) -> String { replicas[replica] + "/devices/" + device }

    /// The files that differ between the owner's folder and a copy (missing or extra ones included).
    private func differences(of device: String, from source: Int, to target: Int) -> [String] {
        let names = Set(storeFiles(folder(device, in: source))).union(storeFiles(folder(device, in: target)))
        return names.sorted().filter { name in
            read(folder(device, in: source) + "/" + name) != read(folder(device, in: target) + "/" + name)
        }
    }

    /// A folder's files, leaving out temporary ones (a leading dot).
    private func storeFiles(_ path: String) -> [String] { Files.list(path).filter { !$0.hasPrefix(".") } }

    private func read(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// How many leading bytes two files share (memcmp by pages: the schedules copy megabytes).
    private func commonPrefix(_ a: Data, _ b: Data) -> Int {
        let length = min(a.count, b.count)
        return a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in
                var same = 0
                while same < length {
                    let chunk = min(4096, length - same)
                    if memcmp(a.baseAddress! + same, b.baseAddress! + same, chunk) == 0 {
                        same += chunk
                    } else {
                        return same + (0..<chunk).first { a[same + $0] != b[same + $0] }!
                    }
                }
                return same
            }
        }
    }

    /// Delivers one file in a randomly chosen way; says how.
    ///
    /// The writer claim travels whole: its length depends on the process that
    /// wrote it (its pid, its state directory's inode), and how much of a file
    /// a piece covers must not, or a seed would replay differently elsewhere.
    /// Only its owner reads it, in its own replica.
    private func deliver(_ name: String, of device: String, from source: Int, to target: Int,
                         using random: inout SeededRandom) -> String {
        let to = folder(device, in: target) + "/" + name
        guard let bytes = read(folder(device, in: source) + "/" + name) else {
            delete(name, of: device, from: source, to: target)
            return "removed"
        }
        let common = commonPrefix(bytes, read(to) ?? Data())
        let way = random.next() % 4
        switch way {
        case 0 where common < bytes.count && name != WriterClaim.fileName:  // a growing prefix, in place
            let end = Int.random(in: common + 1...bytes.count, using: &random)
            writeInPlace(to, bytes.prefix(end), at: 0, total: bytes.count)
            return "bytes 0..<\(end) of \(bytes.count), in place"
        case 1 where common + 1 < bytes.count && name != WriterClaim.fileName:  // a later block first, leaving a hole
            let start = Int.random(in: common + 1..<bytes.count, using: &random)
            let end = Int.random(in: start + 1...bytes.count, using: &random)
            writeInPlace(to, bytes.subdata(in: start..<end), at: start, total: bytes.count)
            return "bytes \(start)..<\(end) of \(bytes.count), in place"
        case 2:  // a stale temporary left behind, then the whole file
            let junk = folder(device, in: target) + "/.syncthing." + name + ".tmp"
            try? Files.writeAtomically(junk, Array(bytes.prefix(bytes.count / 2)))
            copyWhole(name, of: device, from: source, to: target)
            return "whole, a stale temporary left behind"
        default:
            copyWhole(name, of: device, from: source, to: target)
            return "whole"
        }
    }

    /// Carries a file's removal over; the last one of a removed folder takes the folder (and stale temporaries) along.
    private func delete(_ name: String, of device: String, from source: Int, to target: Int) {
        unlink(folder(device, in: target) + "/" + name)
        if !FileManager.default.fileExists(atPath: folder(device, in: source)) && storeFiles(folder(device, in: target)).isEmpty {
            try? FileManager.default.removeItem(atPath: folder(device, in: target))
        }
    }

    /// Writes part of a file where it belongs, completing it (length included) when the part reaches the end.
    private func writeInPlace(_ path: String, _ part: Data, at offset: Int, total: Int) {
        try? Files.makeDirectory((path as NSString).deletingLastPathComponent)
        let fd = open(path, O_WRONLY | O_CREAT, 0o644)
        guard fd >= 0 else { return }
        _ = part.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        if offset + part.count == total { ftruncate(fd, off_t(total)) }
        close(fd)
    }

    /// Copies a file whole through a temporary name, as Syncthing does.
    private func copyWhole(_ name: String, of device: String, from source: Int, to target: Int) {
        let to = folder(device, in: target) + "/" + name
        guard let bytes = read(folder(device, in: source) + "/" + name) else {
            return delete(name, of: device, from: source, to: target)
        }
        try? Files.makeDirectory(folder(device, in: target))
        let temporary = folder(device, in: target) + "/.syncthing." + name + ".tmp"
        guard (try? Files.writeAtomically(temporary, Array(bytes))) != nil else { return }
        rename(temporary, to)
    }
}
