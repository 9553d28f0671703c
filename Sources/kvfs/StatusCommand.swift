import ArgumentParser
import Foundation
import KVStore

/// `kvfs status [--json]`: the store's usage, devices and last sync.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show keys and bytes used, devices, and the last sync.")
    @Flag(help: "Print the JSON document .kvfs/status holds.") var json = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        let access = try StoreAccess.open(store)
        defer { access.close() }
        let document: String
        switch access {
        case let .direct(store):
            document = store.status().json()
        case let .mounted(mountPoint):
            let path = mountPoint + "/.kvfs/status"
            guard let data = FileManager.default.contents(atPath: path) else { throw CommandError.system("cannot read", path) }
            document = String(decoding: data, as: UTF8.self)
        }
        if json {
            print(document, terminator: "")
        } else {
            print(try Self.summary(document), terminator: "")
        }
    }

    /// The status document in a few lines a person reads.
    static func summary(_ document: String) throws -> String {
        guard let object = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any],
              let keys = object["keys"] as? [String: Int], let bytes = object["bytes"] as? [String: Int],
              let device = object["device"] as? [String: Any], let devices = object["devices"] as? [[String: Any]]
        else { throw CommandError("the status document is not what kvfs writes") }
        var lines = [
            "store:      \(object["storeID"] ?? "?") in \(object["syncDirectory"] ?? "?")",
            "device:     \(device["name"] ?? "?") (\(device["id"] ?? "?"))",
            "keys:       \(keys["used"] ?? 0) of \(keys["limit"] ?? 0)",
            "bytes:      \(bytes["used"] ?? 0) of \(bytes["limit"] ?? 0)",
            "last sync:  \(object["lastSync"] as? String ?? "never")",
            "devices:",
        ]
        for other in devices {
            lines.append("  \(other["name"] ?? "?") (\(other["id"] ?? "?")), last write \(other["lastWrite"] as? String ?? "none")")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
