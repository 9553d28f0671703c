import ArgumentParser
import Foundation
import KVStore

/// `kvfs changes [--follow]`: prints the change log, and with --follow waits for more, as `tail -f` does.
struct ChangesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "changes", abstract: "Print the change log (changes that came from other devices, and quota refusals).")
    @Flag(help: "Keep printing new lines as they arrive.") var follow = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        let path = try store.stateURL.appendingPathComponent("changes.log").path
        var printed = 0
        repeat {
            let data = FileManager.default.contents(atPath: path) ?? Data()
            if data.count < printed { printed = 0 }  // the log was trimmed: start again from its new beginning
            if data.count > printed {
                FileHandle.standardOutput.write(data[printed...])
                printed = data.count
            }
            if follow { usleep(200_000) }
        } while follow
    }
}
