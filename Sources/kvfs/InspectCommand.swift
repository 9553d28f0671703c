import ArgumentParser
import Foundation
import KVStore

/// `kvfs inspect FILE`: a file of the sync directory as this device reads it, a sealed store's signed files opened.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect", abstract: "Print a file of the store's folder as this device reads it (a sealed store's signed files opened).",
        discussion: """
            In a sealed store the files beside each device's records (devices/ID/progress.json, device.json, \
            writer.json, waiting.json, adopted.json, retention.json) are sealed and signed by their device \
            (docs/sealed.md); this prints what one holds, checked with this device's keys, so that \
            `kvfs inspect FILE | jq .` reads it as `jq . FILE` reads a plain store's. A file it refuses (forged, \
            altered, moved from another folder) is an error naming why. Any other file is printed as it is.
            """)
    @Argument(help: "The file, in the store's sync directory.") var file: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        let membership = Membership(syncDirectory: try store.syncURL, stateDirectory: try store.stateURL)
        FileHandle.standardOutput.write(Data(try membership.readableContent(ofFileAt: file)))
    }
}
