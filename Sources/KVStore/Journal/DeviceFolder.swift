import Foundation

/// One device's folder in the sync directory, which only that device writes:
/// journal segments `journal-<generation>.log` (append-only framed records)
/// and snapshots `snapshot-<generation>.snap` (the device's records that were
/// still current when it compacted, closed by a `snapshotEnd` record).
///
/// Snapshot G stands for every segment before G; segment G continues it.
/// Anything else in the folder (synchronizer temp files, conflict copies,
/// `.DS_Store`) is not the store's and is ignored.
struct DeviceFolder: Sendable {
    let path: String

    static func segmentName(_ generation: UInt64) -> String { "journal-" + hex(generation) + ".log" }
    static func snapshotName(_ generation: UInt64) -> String { "snapshot-" + hex(generation) + ".snap" }

    func segmentPath(_ generation: UInt64) -> String { path + "/" + Self.segmentName(generation) }
    func snapshotPath(_ generation: UInt64) -> String { path + "/" + Self.snapshotName(generation) }

    /// The generations of the snapshots and segments present, each sorted.
    func listing() -> (snapshots: [UInt64], segments: [UInt64]) {
        var snapshots: [UInt64] = []
        var segments: [UInt64] = []
        for name in Files.list(path) {
            if let generation = Self.generation(name, prefix: "snapshot-", suffix: ".snap") {
                snapshots.append(generation)
            } else if let generation = Self.generation(name, prefix: "journal-", suffix: ".log") {
                segments.append(generation)
            }
        }
        return (snapshots.sorted(), segments.sorted())
    }

    private static func hex(_ generation: UInt64) -> String {
        let digits = String(generation, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func generation(_ name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.utf8.count == prefix.utf8.count + 16 + suffix.utf8.count
        else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return UInt64(digits, radix: 16)
    }
}
