import ArgumentParser
import Foundation
import KVStore

/// `kvfs devices [--json]`: every device the store knows, with its health.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List the devices that share the store, and how each is doing.",
        discussion: """
            STATE is this (the device answering), active, stopped (it closed its store), quiet (it has not closed \
            its store and nothing of it arrived for a while), vanished (its folder is gone; its values are kept) \
            or retired. BEHIND is how far its reading lags the newest writes known here.
            """)
    @Flag(help: "Print the devices as the JSON array of the status document.") var json = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        let status = try StoreStatus(json: StoreAccess.perform(.status, store))
        print(json ? StoreStatus.json(status.devices) : Self.table(status.devices), terminator: "")
    }

    /// One line a device: `ID  NAME  STATE  LAST-HEARD  LAST-WRITE  BEHIND`.
    static func table(_ devices: [DeviceStatus]) -> String {
        let rows = [["ID", "NAME", "STATE", "LAST-HEARD", "LAST-WRITE", "BEHIND"]] + devices.map { device in
            [device.id, device.name, device.state.rawValue,
             device.state == .this ? "-" : device.secondsSinceHeard.map(StatusCommand.age) ?? "never",
             device.lastWrite.map(DateText.format) ?? "-", device.behindSeconds.map(StatusCommand.lag) ?? "-"]
        }
        return TextTable.format(rows)
    }
}

/// `kvfs retire ID [--force] [--revoke]`: retires a device for good, keeping what it won, and in a sealed store
/// can take it out of the roster and move the store to a new key.
struct RetireCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retire", abstract: "Retire a device for good, keeping every value and removal it won.",
        discussion: """
            The device running the command copies the retired device's values and removals that still count \
            into its own folder (with their original stamps), records the retirement, and removes the retired \
            device's folder from the sync directory. Refused for this device, and, without --force, for a device \
            that looks alive or whose folder has not fully arrived here.

            In a sealed store, --revoke then removes the device from the roster and moves the store to a new \
            epoch whose key only the remaining members and the recovery key get: the device's later records are \
            refused on every member. What it had read stays readable to it.
            """)
    @Argument(help: "The device: its id, a unique prefix of it (4 characters or more), or its name (`kvfs devices` lists them).")
    var device: String
    @Flag(help: "Retire it even if it looks alive, or its folder has not fully arrived (keeping what is here).")
    var force = false
    @Flag(help: "In a sealed store: also remove it from the roster and move the store to a new key it does not get.")
    var revoke = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        let membership = revoke ? Membership(syncDirectory: try store.syncURL, stateDirectory: try store.stateURL) : nil
        if revoke, !Membership.isSealed(syncDirectory: try store.syncURL) {
            throw CommandError.usage("--revoke is for a sealed store; this one is not (kvfs retire \(device) retires it)")
        }
        // Retired first, so that what it wrote is adopted while it is still a member whose records are read.
        FileHandle.standardOutput.write(try StoreAccess.perform(.retire(device: device, force: force, revoking: revoke), store))
        if let membership {
            let revoked = try membership.revoke(device)
            print("revoked \(revoked.name) (\(revoked.id)): the store moved to epoch \(revoked.epoch), whose key it does not have")
        }
    }
}
