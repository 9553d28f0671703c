import ArgumentParser
import Foundation
import KVStore

/// `kvfs stores [--json]`: the stores in the sync root, each with its keys,
/// bytes, devices and last write.
struct StoresCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stores", abstract: "List the stores in the sync root ($XDG_DATA_HOME/kvfs/).",
        discussion: """
            A store is the folder its identifier names in the root; a store made on another machine is listed as \
            soon as its folder has arrived (a synchronizer shares the root whole). Each store is read as `kvfs \
            status` reads it: through the daemon of its mount, or opened read-only. DEVICES counts the devices \
            that share it (retired ones and vanished folders not counted); LAST-WRITE is its newest write still \
            in force.
            """)
    @Flag(help: "Print the stores as a JSON array.") var json = false

    func run() throws {
        let summaries = try StoreRoot.default.stores().map(StoreSummary.init)
        print(json ? StoreStatus.json(summaries) : Self.table(summaries), terminator: "")
    }

    /// One line a store: `STORE  KEYS  BYTES  DEVICES  LAST-WRITE`.
    static func table(_ summaries: [StoreSummary]) -> String {
        let rows = [["STORE", "KEYS", "BYTES", "DEVICES", "LAST-WRITE"]] + summaries.map { store in
            [store.identifier, store.keys.map(String.init) ?? "-", store.bytes.map(String.init) ?? "-", String(store.devices),
             store.lastWrite.map(DateText.format) ?? "-"]
        }
        return TextTable.format(rows)
    }
}

/// What `kvfs stores` says of one store.
struct StoreSummary: Encodable {
    var identifier: String
    var syncDirectory: String
    /// Nil for a sealed store this machine is no member of: only a member reads its keys.
    var keys: Int?
    var bytes: Int?
    var devices: Int
    var lastWrite: Date?

    init(_ store: StoreIdentifier) throws {
        let status: StoreStatus
        do {
            status = try StoreStatus(json: StoreAccess.perform(.status, StoreOptions.parse(["--store", store.rawValue])))
        } catch KVStoreError.notMember, KVStoreError.copiedStateDirectory {
            // Listed all the same (docs/command-line.md § kvfs stores): its device folders say how many devices it has.
            let folder = StoreRoot.default.folder(of: store)
            identifier = store.rawValue
            syncDirectory = folder.path
            devices = ((try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("devices").path)) ?? []).count
            return
        } catch {
            let failure = CommandError.from(error) ?? CommandError(String(describing: error))
            throw CommandError("store \(store): \(failure.description)", exitStatus: failure.exitStatus)
        }
        identifier = store.rawValue
        syncDirectory = status.syncDirectory
        keys = status.keys.used
        bytes = status.bytes.used
        // A device with no folder here is not one: a vanished or retired one, or this command's own when it
        // opened a store this machine has never written (read-only, it makes no folder).
        devices = status.devices.filter { $0.state != .retired && $0.state != .vanished && ($0.state != .this || $0.folderChanged != nil) }.count
        lastWrite = status.devices.compactMap(\.lastWrite).max()
    }
}
