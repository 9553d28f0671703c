import ArgumentParser
import Foundation
import KVStore

/// `kvfs changes [--follow]`: prints the change log, and with --follow waits for more, as `tail -f` does.
struct ChangesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes", abstract: "Print the change log (changes that came from other devices, and quota refusals).",
        discussion: """
            One JSON line per change, with Apple's reasons and codes: ServerChange 0, InitialSyncChange 1, \
            QuotaViolationChange 2, AccountChange 3, and Conflict (code 0) for a value of this device that a \
            concurrent write replaced, with the `kvfs restore` that writes it again. --follow reads the state \
            directory's log every 0.2 s, by seq, and says on standard error how many lines were cut back \
            before it could print them.
            """)
    @Flag(help: "Keep printing new lines as they arrive.") var follow = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        // By `seq`, not by size: the log shrinks when it is cut back, and its lines are printed once.
        let log = ChangeLogFollower(path: try store.stateURL.appendingPathComponent("changes.log").path)
        var missed = 0
        repeat {
            let lines = log.newLines()
            if !lines.isEmpty { FileHandle.standardOutput.write(Data(lines)) }
            if log.missed > missed {
                FileHandle.standardError.write(Data("kvfs: \(log.missed - missed) lines of the change log were cut back before they could be printed\n".utf8))
                missed = log.missed
            }
            if follow { usleep(200_000) }
        } while follow
    }
}
