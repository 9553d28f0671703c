import Foundation
@testable import KVStore

/// A fresh temporary folder, removed by `cleanup()`.
struct TemporaryFolder {
    let url: URL
    var path: String { url.path }

    init(_ label: String = "kvfs") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func sub(_ name: String) -> URL { url.appendingPathComponent(name) }

    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

/// A store on `sync` as the device whose state lives in `root/<device>`, quiet about warnings.
func openStore(_ root: TemporaryFolder, device: String, sync: String = "sync",
               clock: HybridLogicalClock = HybridLogicalClock()) throws -> DeviceStore {
    try DeviceStore(syncDirectory: root.sub(sync), stateDirectory: root.sub("state-\(device)"),
                    deviceName: device, clock: clock, warn: { _ in })
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
