import Foundation
@testable import KVStore
@_exported import TestSupport

/// A store on `sync` as the device whose state lives in `root/<device>`, quiet about warnings.
func openStore(_ root: TemporaryFolder, device: String, sync: String = "sync",
               clock: HybridLogicalClock = HybridLogicalClock()) throws -> DeviceStore {
    TestSealing.installIfAsked()
    return try DeviceStore(syncDirectory: root.sub(sync), stateDirectory: root.sub("state-\(device)"),
                    deviceName: device, clock: clock, warn: { _ in })
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Every entry under `path` (itself not included) with what a write would
/// change: type and mode, size, modification time, inode. Links are not followed.
func fileTree(_ path: String) throws -> [String: [Int]] {
    var entries: [String: [Int]] = [:]
    for name in try FileManager.default.subpathsOfDirectory(atPath: path) {
        var status = stat()
        guard lstat(path + "/" + name, &status) == 0 else { continue }
        entries[name] = [Int(status.st_mode), Int(status.st_size), status.st_mtim.tv_sec, status.st_mtim.tv_nsec, Int(status.st_ino)]
    }
    return entries
}
